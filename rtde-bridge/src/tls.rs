//! TLS to the broker (`mqtts://`, the `tls` feature): which certificate authorities to
//! trust, and the MQTT transport made of it, for the bridge and the subscriber alike.

/// TLS to the broker: the certificate authorities trusted for the broker's certificate.
/// Made with the `tls` feature (`Tls::platform`, `Tls::trusting`, `Tls::read_ca_file`;
/// `Subscriber::connect_tls` takes one); a configuration's `mqtts://` URLs make one too
/// ([`crate::config::Broker::tls`]).
///
/// ```
/// # #[cfg(feature = "tls")] {
/// use rtde_bridge::Tls;
///
/// let plant = Tls::trusting(b"-----BEGIN CERTIFICATE-----\n...".to_vec());
/// assert!(plant.ca().is_some());
/// assert_eq!(Tls::platform().ca(), None);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    /// The authorities' certificates (PEM) trusted instead of the platform's.
    ca: Option<Vec<u8>>,
}

impl Tls {
    /// Trusts the platform's certificate authorities.
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn platform() -> Tls {
        Tls { ca: None }
    }

    /// Trusts the authorities whose certificates (PEM) are `ca`, and only them: a plant's
    /// own CA.
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn trusting(ca: Vec<u8>) -> Tls {
        Tls { ca: Some(ca) }
    }

    /// [`Tls::trusting`] the certificates (PEM) in the file at `path`.
    ///
    /// # Errors
    /// The file cannot be read.
    #[cfg(feature = "tls")]
    pub fn read_ca_file(path: &std::path::Path) -> std::io::Result<Tls> {
        std::fs::read(path).map(Tls::trusting)
    }

    /// A configuration's TLS: trusting `ca` if given, else the platform's authorities.
    /// Without the `tls` feature the configuration refuses `mqtts://` before.
    pub(crate) fn configured(ca: Option<Vec<u8>>) -> Tls {
        Tls { ca }
    }

    /// The certificates (PEM) trusted instead of the platform's, if any.
    #[must_use]
    pub fn ca(&self) -> Option<&[u8]> {
        self.ca.as_deref()
    }

    /// Makes `options` connect over TLS, trusting these authorities.
    #[cfg(feature = "tls")]
    pub(crate) fn apply(&self, options: &mut rumqttc::MqttOptions) {
        options.set_transport(match &self.ca {
            Some(ca) => rumqttc::Transport::tls(ca.clone(), None, None),
            None => rumqttc::Transport::tls_with_default_config(),
        });
    }
}
