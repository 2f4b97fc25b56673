//! A real Mosquitto for the tests: started on a free loopback port with a configuration
//! of its own, stopped (and reaped) when dropped. No mock broker.
//!
//! Without a `mosquitto` binary the tests that need one skip, saying how to install it;
//! `.ci/run` installs it and sets `RTDE_REQUIRE_MOSQUITTO=1`, which turns a missing
//! binary into a failure.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian puts it, then the PATH.
fn binary() -> Option<PathBuf> {
    let debian = PathBuf::from("/usr/sbin/mosquitto");
    if debian.is_file() {
        return Some(debian);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("mosquitto"))
            .find(|p| p.is_file())
    })
}

/// A Mosquitto process of this test's own.
#[derive(Debug)]
pub struct Broker {
    child: Option<Child>,
    /// The loopback port it listens on (kept across restarts).
    pub port: u16,
    dir: PathBuf,
    bin: PathBuf,
}

impl Broker {
    /// Starts a broker, or says why not and returns `None` (the test then skips).
    pub fn start(test: &str) -> Option<Broker> {
        let Some(bin) = binary() else {
            let msg = "mosquitto is not installed: `apt-get install -y mosquitto` (Debian) \
                       runs this test; .ci/run does it";
            assert!(
                std::env::var_os("RTDE_REQUIRE_MOSQUITTO").is_none(),
                "{msg}"
            );
            eprintln!("skipped: {msg}");
            return None;
        };
        let dir =
            std::env::temp_dir().join(format!("rtde-bridge-test-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Started as root, mosquitto switches to its own user: it must be able to write
        // its log and persistence file here.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        for _ in 0..5 {
            let port = free_port();
            let mut broker = Broker {
                child: None,
                port,
                dir: dir.clone(),
                bin: bin.clone(),
            };
            if broker.run() {
                return Some(broker);
            }
        }
        panic!("mosquitto did not start on a free loopback port (5 tries)");
    }

    /// `mqtt://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }

    /// The process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Writes the configuration and starts the process on `self.port`; true once it
    /// accepts connections.
    fn run(&mut self) -> bool {
        let conf = self.dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "listener {port} 127.0.0.1\n\
                 allow_anonymous true\n\
                 # Sessions and their queued messages survive a restart (saved on SIGTERM).\n\
                 persistence true\n\
                 persistence_location {dir}/\n\
                 # Hold everything a persistent subscriber is owed while it reconnects.\n\
                 max_queued_messages 0\n\
                 max_inflight_messages 0\n\
                 log_dest file {dir}/mosquitto.log\n\
                 log_type error\n\
                 log_type warning\n",
                port = self.port,
                dir = self.dir.display()
            ),
        )
        .unwrap();
        let child = Command::new(&self.bin)
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot run mosquitto");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return false; // exited: the port was taken in between
            }
            if TcpStream::connect_timeout(
                &SocketAddr::from((Ipv4Addr::LOCALHOST, self.port)),
                Duration::from_millis(200),
            )
            .is_ok()
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Stops the broker with SIGTERM (so it saves its persistence file) and reaps it.
    pub fn stop(&mut self) {
        if let Some(child) = self.child.take() {
            crate::process::terminate(child, Duration::from_secs(10));
        }
    }

    /// Pauses the broker's process (SIGSTOP): its connections stay open, and what is
    /// sent to it waits there, unread and unacknowledged.
    pub fn freeze(&self) {
        let pid = self.pid().expect("running").to_string();
        let status = Command::new("kill").args(["-STOP", &pid]).status().unwrap();
        assert!(status.success());
    }

    /// Kills the broker (SIGKILL), frozen or not, and reaps it: it saves nothing, and
    /// its connections break.
    pub fn crash(&mut self) {
        let mut child = self.child.take().expect("running");
        let _ = child.kill();
        let _ = child.wait();
    }

    /// Starts the broker again on the same port, with what it saved.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        assert!(
            self.run(),
            "mosquitto did not come back on port {}",
            self.port
        );
    }

    /// Deletes what a stopped broker saved: it comes back knowing no session and no
    /// retained message, as a broker without persistence (or with a lost disk) does.
    pub fn forget(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        for entry in std::fs::read_dir(&self.dir).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "db") {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
    }

    /// The directory of its configuration, log and persistence file.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A bridge configuration for `robots` (name, address) on `broker_url`.
pub fn config(
    broker_url: &str,
    robots: &[(String, SocketAddr)],
    extra_payload: &str,
    frequency: f64,
) -> String {
    let mut s = format!(
        "[broker]\nurl = \"{broker_url}\"\nclient_id = \"test-bridge\"\n\n[payload]\n{extra_payload}\n"
    );
    for (name, addr) in robots {
        s.push_str(&format!(
            "\n[[robots]]\nname = \"{name}\"\naddress = \"{addr}\"\nfields = [\"actual_q\"]\nfrequency = {frequency}\n"
        ));
    }
    s
}

/// A TCP relay on a loopback port to `target`: what the bridge connects through when a
/// test must break its connection to a broker that stays up ([`Relay::cut`]).
#[derive(Debug)]
pub struct Relay {
    /// The loopback port clients connect to.
    pub port: u16,
    links: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    /// Listens on a free loopback port and relays each connection to `target`.
    pub fn start(target: u16) -> Relay {
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let links = std::sync::Arc::new(std::sync::Mutex::new(Vec::<TcpStream>::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let (links, stop) = (links.clone(), stop.clone());
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let Ok(client) = client else { continue };
                    let Ok(server) = TcpStream::connect((Ipv4Addr::LOCALHOST, target)) else {
                        continue;
                    };
                    for (mut from, mut to) in [
                        (client.try_clone().unwrap(), server.try_clone().unwrap()),
                        (server.try_clone().unwrap(), client.try_clone().unwrap()),
                    ] {
                        std::thread::spawn(move || {
                            let _ = std::io::copy(&mut from, &mut to);
                            let _ = to.shutdown(std::net::Shutdown::Both);
                        });
                    }
                    links.lock().unwrap().extend([client, server]);
                }
            })
        };
        Relay {
            port,
            links,
            stop,
            thread: Some(thread),
        }
    }

    /// `mqtt://127.0.0.1:PORT` of the relay.
    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }

    /// Breaks every connection through the relay, both ways, with no MQTT DISCONNECT:
    /// to the broker, the client vanished. New connections go through again.
    pub fn cut(&self) {
        for link in self.links.lock().unwrap().drain(..) {
            let _ = link.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.cut();
        // Wakes the accepting thread so it sees the stop.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
