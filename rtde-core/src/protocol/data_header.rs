//! Recognising the data packages of the output recipe set up, by their first bytes.

use super::frame::{HEADER_LEN, MAX_PACKAGE_LEN};
use super::{ProtocolVersion, package_type};

/// The first bytes of every data package of one output recipe on one link: its size, the
/// DATA_PACKAGE type and, in protocol v2, the recipe id.
///
/// Once the recipe is set up, nearly every package a controller sends starts with these
/// bytes, so a reader takes one with a single comparison instead of parsing the frame and
/// decoding the message; anything else (a text message, another recipe's package, a
/// package of another size) does not match and goes the general way, which reports it.
///
/// ```
/// use rtde_core::protocol::{ControllerMessage, DataHeader, ProtocolVersion};
///
/// let values = [0u8; 8];
/// let mut buf = [0u8; 16];
/// let n = ControllerMessage::DataPackage { recipe_id: Some(1), payload: &values }
///     .encode(ProtocolVersion::V2, &mut buf)
///     .unwrap();
///
/// let header = DataHeader::new(ProtocolVersion::V2, Some(1), values.len()).unwrap();
/// assert_eq!(header.package_len(), n);
/// assert_eq!(header.payload(&buf[..n]), Some(&values[..]));
/// // Another recipe's package, or one cut short, is not this recipe's.
/// assert_eq!(DataHeader::new(ProtocolVersion::V2, Some(2), 8).unwrap().payload(&buf), None);
/// assert_eq!(header.payload(&buf[..n - 1]), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    /// The first four bytes of a package, big-endian, with the bits `mask` selects.
    expected: u32,
    mask: u32,
    /// Where the values start: after the header, and the recipe id in protocol v2.
    values_at: usize,
    package_len: usize,
}

impl DataHeader {
    /// The header of `version`'s data packages of a recipe whose values take
    /// `payload_size` bytes, with `recipe_id` in protocol v2 (v1 packages carry none).
    ///
    /// `None` when no such package exists: no values, a package longer than the size field
    /// can say, or a recipe id that does not match the protocol (v2 needs one, v1 has none).
    #[must_use]
    pub const fn new(
        version: ProtocolVersion,
        recipe_id: Option<u8>,
        payload_size: usize,
    ) -> Option<DataHeader> {
        let (id, id_len) = match (version, recipe_id) {
            (ProtocolVersion::V2, Some(id)) => (id, 1),
            (ProtocolVersion::V1, None) => (0, 0),
            _ => return None,
        };
        if payload_size == 0 {
            return None;
        }
        let values_at = HEADER_LEN + id_len;
        let package_len = match values_at.checked_add(payload_size) {
            Some(len) if len <= MAX_PACKAGE_LEN => len,
            _ => return None,
        };
        // Lossless: `MAX_PACKAGE_LEN` is `u16::MAX` (`u16::try_from` is not const).
        #[allow(clippy::cast_possible_truncation)]
        let [hi, lo] = (package_len as u16).to_be_bytes();
        // With a recipe id the four bytes are all known; without, the fourth is a value.
        let mask = if id_len == 1 { u32::MAX } else { 0xFFFF_FF00 };
        let expected = u32::from_be_bytes([hi, lo, package_type::DATA_PACKAGE, id]) & mask;
        Some(DataHeader {
            expected,
            mask,
            values_at,
            package_len,
        })
    }

    /// The values of the package at the front of `buf`, if it is a whole data package of
    /// this recipe; `None` for anything else, and for a package not yet whole.
    #[inline]
    #[must_use]
    pub fn payload<'a>(&self, buf: &'a [u8]) -> Option<&'a [u8]> {
        let package = buf.get(..self.package_len)?;
        let (&head, _) = package.split_first_chunk::<4>()?;
        if u32::from_be_bytes(head) & self.mask != self.expected {
            return None;
        }
        package.get(self.values_at..)
    }

    /// The length of one package, header included.
    #[must_use]
    pub const fn package_len(&self) -> usize {
        self.package_len
    }

    /// Where the values start in a package: after the header and the recipe id.
    #[must_use]
    pub const fn values_at(&self) -> usize {
        self.values_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ControllerMessage, Frame};

    /// The general way: frame parse and message decode.
    fn decoded(buf: &[u8], version: ProtocolVersion) -> Option<(Option<u8>, &[u8])> {
        let (frame, _) = Frame::parse(buf).ok()??;
        match ControllerMessage::decode(frame, version).ok()? {
            ControllerMessage::DataPackage { recipe_id, payload } => Some((recipe_id, payload)),
            _ => None,
        }
    }

    #[test]
    fn it_takes_exactly_what_the_general_decode_takes_for_the_recipe() {
        for version in [ProtocolVersion::V1, ProtocolVersion::V2] {
            let id = (version == ProtocolVersion::V2).then_some(3);
            for size in [1, 4, 8, 272] {
                let header = DataHeader::new(version, id, size).unwrap();
                let values: Vec<u8> = (0..=u8::MAX).cycle().step_by(7).take(size).collect();
                let mut buf = vec![0u8; size + 8];
                let n = ControllerMessage::DataPackage {
                    recipe_id: id,
                    payload: &values,
                }
                .encode(version, &mut buf)
                .unwrap();
                assert_eq!(header.package_len(), n);
                assert_eq!(header.payload(&buf), Some(&values[..]));
                assert_eq!(decoded(&buf, version), Some((id, &values[..])));
                // Every single-byte change to the header is someone else's package.
                for at in 0..header.values_at() {
                    let mut other = buf.clone();
                    other[at] ^= 0x01;
                    assert_eq!(header.payload(&other), None, "{version:?} {size} {at}");
                }
                assert_eq!(header.payload(&buf[..n - 1]), None);
            }
        }
    }

    #[test]
    fn a_text_message_of_the_same_length_is_not_data() {
        let header = DataHeader::new(ProtocolVersion::V1, None, 5).unwrap();
        let text = [
            0x00,
            0x08,
            package_type::TEXT_MESSAGE,
            1,
            b'h',
            b'i',
            b'!',
            0,
        ];
        assert_eq!(header.payload(&text), None);
    }

    #[test]
    fn impossible_packages_have_no_header() {
        assert_eq!(DataHeader::new(ProtocolVersion::V2, Some(1), 0), None);
        assert_eq!(DataHeader::new(ProtocolVersion::V2, None, 8), None);
        assert_eq!(DataHeader::new(ProtocolVersion::V1, Some(1), 8), None);
        assert_eq!(
            DataHeader::new(ProtocolVersion::V2, Some(1), MAX_PACKAGE_LEN),
            None
        );
        assert!(DataHeader::new(ProtocolVersion::V2, Some(1), MAX_PACKAGE_LEN - 4).is_some());
    }
}
