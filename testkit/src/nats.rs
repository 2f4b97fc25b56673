//! A real 3-node NATS cluster for the bridge's failover tests: each node with JetStream
//! (its own store in a temporary directory), an MQTT listener on a loopback port, and
//! routes to the other two; the MQTT sessions, retained messages and QoS 1 queues
//! replicated on all three (`stream_replicas: 3`), so a node's death costs no state.
//! Stopped (and reaped) when dropped.
//!
//! [`Cluster::start_tls`] adds TLS to the MQTT listeners, with a certificate for
//! `127.0.0.1` signed by a CA of the test's own ([`Cluster::ca_file`]); each listener
//! still takes plain MQTT too (`allow_non_tls`), so the readiness probe and a plain
//! subscriber work as without TLS.
//!
//! Without a `nats-server` binary the tests that need one skip, saying how to install it;
//! `.ci/run` installs it and sets `RTDE_REQUIRE_NATS=1`, which turns a missing binary
//! into a failure (the rule of [`crate::mosquitto`]).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a node waits for a QoS 1 subscriber's PUBACK before it delivers the message
/// again (`mqtt { ack_wait }`, nats-server's default, written out so the tests and the
/// failover bench know it). A message the killed node had sent to a subscriber that never
/// got it (in flight when the node died) comes from the node the subscriber resumes on
/// only this long after the kill: not lost, late (docs/mqtt-scaling.md).
pub const ACK_WAIT: Duration = Duration::from_secs(30);

/// How many QoS 1 deliveries a subscriber may leave unacknowledged before its node waits
/// (`mqtt { max_ack_pending }`) in a [`Cluster::start`]ed cluster. When a node dies, or a
/// subscriber's session moves, the broker delivers again at most these: each node that
/// stops or starts can cost a subscriber this many duplicates, and no more. Small, so a
/// test can hold the bridge to that bound: a test's subscriber takes a few hundred
/// batches a second and acknowledges each at once.
pub const MAX_ACK_PENDING: u16 = 64;

/// nats-server's own `max_ack_pending`, for a cluster that carries a fleet
/// ([`Cluster::start_with_window`]): a subscriber of thousands of messages a second needs
/// that many in flight.
pub const DEFAULT_MAX_ACK_PENDING: u16 = 1024;

/// How long a node may take to answer an MQTT client once started: JetStream elects its
/// leaders first, slowly on a loaded machine.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// Where Debian puts it, or the PATH.
fn binary() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
            .map(|p| p.join("nats-server"))
            .find(|p| p.is_file())
    })
}

/// One node: its ports (kept across restarts) and its process while it runs.
#[derive(Debug)]
struct Node {
    client: u16,
    route: u16,
    mqtt: u16,
    /// The HTTP monitoring port (`/jsz`, `/connz`), for a test's diagnosis.
    monitor: u16,
    child: Option<Child>,
}

/// Three `nats-server` processes of this test's own, clustered.
#[derive(Debug)]
pub struct Cluster {
    nodes: Vec<Node>,
    dir: PathBuf,
    bin: PathBuf,
    /// Whether the MQTT listeners take TLS (with the certificates in `dir`).
    tls: bool,
    /// `mqtt { max_ack_pending }` on every node.
    max_ack_pending: u16,
    /// More `mqtt {}` options on every node, as written in its configuration.
    mqtt_options: String,
}

impl Cluster {
    /// Starts the three nodes and waits until each accepts an MQTT connection, or says
    /// why not and returns `None` (the test then skips).
    pub fn start(test: &str) -> Option<Cluster> {
        Cluster::start_with(test, false, MAX_ACK_PENDING, "")
    }

    /// [`Cluster::start`], each node letting a subscriber leave `max_ack_pending`
    /// deliveries unacknowledged instead of [`MAX_ACK_PENDING`].
    pub fn start_with_window(test: &str, max_ack_pending: u16) -> Option<Cluster> {
        Cluster::start_with_mqtt(test, max_ack_pending, "")
    }

    /// [`Cluster::start_with_window`], with `options` added to each node's `mqtt {}` block
    /// as written (`consumer_memory_storage: true`, say), to compare nats-server's own
    /// settings.
    pub fn start_with_mqtt(test: &str, max_ack_pending: u16, options: &str) -> Option<Cluster> {
        Cluster::start_with(test, false, max_ack_pending, options)
    }

    /// [`Cluster::start`], with TLS on the MQTT listeners as well as plain MQTT: the
    /// nodes' certificate (for `127.0.0.1`) is signed by a CA made for this cluster,
    /// [`Cluster::ca_file`]. Made with the `openssl` command; without it, `None` (the
    /// test skips, or fails under `RTDE_REQUIRE_NATS`).
    pub fn start_tls(test: &str) -> Option<Cluster> {
        Cluster::start_with(test, true, MAX_ACK_PENDING, "")
    }

    fn start_with(
        test: &str,
        tls: bool,
        max_ack_pending: u16,
        mqtt_options: &str,
    ) -> Option<Cluster> {
        let Some(bin) = binary() else {
            let msg = "nats-server is not installed: `apt-get install -y nats-server` \
                       (Debian) runs this test; .ci/run does it";
            assert!(std::env::var_os("RTDE_REQUIRE_NATS").is_none(), "{msg}");
            eprintln!("skipped: {msg}");
            return None;
        };
        let dir =
            std::env::temp_dir().join(format!("rtde-nats-test-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if tls && let Err(why) = make_certificates(&dir) {
            let msg = format!("cannot make the test's certificates with openssl: {why}");
            assert!(std::env::var_os("RTDE_REQUIRE_NATS").is_none(), "{msg}");
            eprintln!("skipped: {msg}");
            return None;
        }
        let mut cluster = Cluster {
            nodes: Vec::new(),
            dir,
            bin,
            tls,
            max_ack_pending,
            mqtt_options: mqtt_options.to_owned(),
        };
        for _ in 0..5 {
            cluster.nodes = distinct_free_ports(12)
                .chunks(4)
                .map(|p| Node {
                    client: p[0],
                    route: p[1],
                    mqtt: p[2],
                    monitor: p[3],
                    child: None,
                })
                .collect();
            for i in 0..3 {
                cluster.write_config(i);
                cluster.spawn(i);
            }
            if (0..3).all(|i| cluster.wait_ready(i)) {
                return Some(cluster);
            }
            // A port was taken in between: all three again, on other ports.
            for i in 0..3 {
                if cluster.is_up(i) {
                    cluster.kill(i);
                }
            }
        }
        panic!("the NATS cluster did not start on free loopback ports (5 tries)");
    }

    /// The MQTT port of node `i` (0, 1 or 2).
    pub fn mqtt_port(&self, i: usize) -> u16 {
        self.nodes[i].mqtt
    }

    /// The most deliveries a node leaves a subscriber unacknowledged
    /// (`mqtt { max_ack_pending }`): what each node change can make it deliver again.
    pub fn max_ack_pending(&self) -> u16 {
        self.max_ack_pending
    }

    /// `mqtt://127.0.0.1:PORT` of node `i`.
    pub fn url(&self, i: usize) -> String {
        format!("mqtt://127.0.0.1:{}", self.nodes[i].mqtt)
    }

    /// `mqtts://127.0.0.1:PORT` of node `i`, for a cluster started with TLS.
    pub fn tls_url(&self, i: usize) -> String {
        assert!(self.tls, "started without TLS");
        format!("mqtts://127.0.0.1:{}", self.nodes[i].mqtt)
    }

    /// The CA (PEM) that signed the nodes' certificate, for a cluster started with TLS.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// The three MQTT URLs, node 0 first.
    pub fn urls(&self) -> Vec<String> {
        (0..3).map(|i| self.url(i)).collect()
    }

    /// Node `i`'s process id while it runs: to read its CPU time.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].child.as_ref().map(Child::id)
    }

    /// Whether node `i` runs.
    pub fn is_up(&self, i: usize) -> bool {
        self.nodes[i].child.is_some()
    }

    /// Kills node `i` with SIGKILL and reaps it: it saves nothing more, its connections
    /// break, and the other two carry on with the replicas.
    pub fn kill(&mut self, i: usize) {
        let mut child = self.nodes[i].child.take().expect("running");
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Stops node `i` with SIGTERM, as a rolling upgrade does: it hands its JetStream
    /// leaderships over and closes its connections; reaped (SIGKILL after 30 s).
    pub fn stop(&mut self, i: usize) {
        let child = self.nodes[i].child.take().expect("running");
        crate::process::terminate(child, Duration::from_secs(30));
    }

    /// Starts node `i` again, on its ports and with its store, and waits until its
    /// JetStream has caught up (`/healthz` says `ok`) and it accepts an MQTT connection,
    /// as a rolling upgrade waits before it stops the next node: stopping another while
    /// this one still catches up leaves the streams one current replica, and nats-server
    /// 2.9.10 then lost acknowledged messages ("deleted message" in a consumer's lookup).
    ///
    /// No MQTT client reaches the node before it has caught up: its first one makes it
    /// delete and create its retained messages' consumer (`$MQTT_rmsgs_<its name's
    /// hash>`), and nats-server 2.9.10 doing that while it catches up was seen to leave
    /// the consumer "not current" for good (1 run of the cluster tests in 8; the `/healthz` repair
    /// came in 2.9.17).
    pub fn restart(&mut self, i: usize) {
        assert!(self.nodes[i].child.is_none(), "kill it first");
        self.spawn(i);
        self.wait_caught_up(i);
        assert!(
            self.wait_ready(i),
            "nats-server n{i} did not come back: {}",
            self.log_tail(i)
        );
        self.wait_caught_up(i);
    }

    /// Waits until node `i`'s `/healthz` says `ok`: every stream and consumer it holds a
    /// replica of is current.
    fn wait_caught_up(&mut self, i: usize) {
        let deadline = Instant::now() + READY_WITHIN;
        loop {
            let health = self.monitor(i, "/healthz");
            if health.replace(' ', "").contains("\"status\":\"ok\"") {
                return;
            }
            if let Some(Ok(Some(status))) = self.nodes[i].child.as_mut().map(Child::try_wait) {
                self.nodes[i].child = None;
                panic!("nats-server n{i} exited ({status}): {}", self.log_tail(i));
            }
            assert!(
                Instant::now() < deadline,
                "nats-server n{i}'s JetStream did not catch up within {READY_WITHIN:?}: {health}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// What node `i`'s monitoring endpoint says at `path` (`/jsz?consumers=true`, for
    /// instance), or why it cannot be read.
    pub fn monitor(&self, i: usize, path: &str) -> String {
        let read = || -> std::io::Result<String> {
            let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, self.nodes[i].monitor))?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
            let mut body = String::new();
            s.read_to_string(&mut body)?;
            Ok(body)
        };
        read().unwrap_or_else(|e| format!("cannot read n{i}'s {path}: {e}"))
    }

    /// The node that leads JetStream stream `stream` (`$MQTT_msgs`, the QoS 1 messages;
    /// `$MQTT_sess`, the sessions), as node `asked` sees it: `None` if it names none.
    pub fn stream_leader(&self, asked: usize, stream: &str) -> Option<usize> {
        let reply = self.monitor(asked, "/jsz?accounts=true&streams=true");
        let body = &reply[reply.find('{')?..];
        let jsz: serde_json::Value = serde_json::from_str(body).ok()?;
        let leader = jsz["account_details"]
            .as_array()?
            .iter()
            .flat_map(|a| a["stream_detail"].as_array().cloned().unwrap_or_default())
            .find(|s| s["name"] == stream)?["cluster"]["leader"]
            .as_str()?
            .to_owned();
        leader.strip_prefix('n')?.parse().ok()
    }

    /// The directory of the configurations, logs and stores.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write_config(&self, i: usize) {
        let node = &self.nodes[i];
        let routes = self
            .nodes
            .iter()
            .map(|n| format!("nats-route://127.0.0.1:{}", n.route))
            .collect::<Vec<_>>()
            .join(", ");
        let store = self.dir.join(format!("n{i}"));
        let tls = if self.tls {
            format!(
                ", tls {{ cert_file: \"{}\", key_file: \"{}\" }}",
                self.dir.join("node.pem").display(),
                self.dir.join("node.key").display()
            )
        } else {
            String::new()
        };
        std::fs::write(
            self.dir.join(format!("n{i}.conf")),
            format!(
                "server_name: n{i}\n\
                 listen: 127.0.0.1:{client}\n\
                 http: 127.0.0.1:{monitor}\n\
                 jetstream {{ store_dir: \"{store}\" }}\n\
                 cluster {{ name: rtde, listen: 127.0.0.1:{route}, routes: [{routes}] }}\n\
                 # Plain MQTT too on a TLS listener: the readiness probe uses it.\n\
                 allow_non_tls: {tls_too}\n\
                 # Sessions, retained messages and QoS 1 queues on all three nodes.\n\
                 mqtt {{ listen: 127.0.0.1:{mqtt}, stream_replicas: 3, ack_wait: \"{ack_wait}s\", \
                 max_ack_pending: {max_ack_pending}{tls}\n{options} }}\n",
                tls_too = self.tls,
                max_ack_pending = self.max_ack_pending,
                options = self.mqtt_options,
                ack_wait = ACK_WAIT.as_secs(),
                client = node.client,
                route = node.route,
                mqtt = node.mqtt,
                monitor = node.monitor,
                store = store.display(),
            ),
        )
        .unwrap();
    }

    fn spawn(&mut self, i: usize) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("n{i}.log")))
            .unwrap();
        // In the cluster's own directory: nats-server 2.9.10 was seen to write a consumer's
        // metadata (`meta.inf`, `meta.sum`) into its working directory, which is the test's
        // crate otherwise.
        let child = Command::new(&self.bin)
            .current_dir(&self.dir)
            .arg("-c")
            .arg(self.dir.join(format!("n{i}.conf")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("cannot run nats-server");
        self.nodes[i].child = Some(child);
    }

    /// Waits until node `i` accepts an MQTT client (a CONNACK with code 0): its JetStream
    /// and the MQTT streams are up. False if a node exited (a port taken in between).
    fn wait_ready(&mut self, i: usize) -> bool {
        let deadline = Instant::now() + READY_WITHIN;
        while Instant::now() < deadline {
            for node in &mut self.nodes {
                if let Some(Ok(Some(_))) = node.child.as_mut().map(Child::try_wait) {
                    node.child = None;
                    return false;
                }
            }
            if mqtt_accepts(self.nodes[i].mqtt) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "nats-server n{i} did not accept an MQTT client within {READY_WITHIN:?}: {}",
            self.log_tail(i)
        );
    }

    fn log_tail(&self, i: usize) -> String {
        let log = std::fs::read_to_string(self.dir.join(format!("n{i}.log"))).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            if let Some(mut child) = node.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        if std::thread::panicking() {
            eprintln!("the NATS cluster's logs are kept in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A CA and, signed by it, a certificate for `IP:127.0.0.1` with its key, in `dir`:
/// `ca.pem`, `node.pem`, `node.key`. Valid for a day.
fn make_certificates(dir: &Path) -> Result<(), String> {
    let openssl = |args: &[&str]| -> Result<(), String> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("cannot run openssl: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    };
    let key = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &key,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "1",
                "-subj",
                "/CN=rtde test CA",
            ],
        ]
        .concat(),
    )
    .and_then(|()| {
        openssl(
            &[
                &["req"][..],
                &key,
                &[
                    "-keyout",
                    "node.key",
                    "-out",
                    "node.csr",
                    "-subj",
                    "/CN=127.0.0.1",
                ],
            ]
            .concat(),
        )
    })?;
    std::fs::write(dir.join("node.ext"), "subjectAltName=IP:127.0.0.1\n")
        .map_err(|e| e.to_string())?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        "node.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "node.pem",
        "-days",
        "1",
        "-extfile",
        "node.ext",
    ])
}

/// `n` loopback ports nothing listens on right now, all different: held together while
/// they are picked, so none is picked twice.
fn distinct_free_ports(n: usize) -> Vec<u16> {
    let held: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap())
        .collect();
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// Whether an MQTT 3.1.1 client with a clean session is accepted on `port`: a CONNECT
/// answered by a CONNACK with return code 0.
fn mqtt_accepts(port: u16) -> bool {
    let attempt = || -> std::io::Result<bool> {
        let mut s = TcpStream::connect_timeout(
            &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            Duration::from_millis(500),
        )?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        // CONNECT: protocol level 4, clean session, keep-alive 30 s, client id of 18 bytes.
        let connect = [
            &[0x10, 30, 0, 4][..],
            b"MQTT",
            &[4, 0x02, 0, 30, 0, 18],
            b"rtde-testkit-probe",
        ]
        .concat();
        s.write_all(&connect)?;
        let mut connack = [0u8; 4];
        s.read_exact(&mut connack)?;
        let _ = s.write_all(&[0xe0, 0]); // DISCONNECT
        Ok(connack[0] == 0x20 && connack[3] == 0)
    };
    attempt().unwrap_or(false)
}
