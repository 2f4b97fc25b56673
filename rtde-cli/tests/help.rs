//! The help teaches: every command explains itself with examples.

mod common;

#[test]
fn every_command_has_examples_in_its_help() {
    for command in ["fields", "check", "record", "replay", "plot", "sim"] {
        let run = common::run(&["help", command]);
        run.ok();
        assert!(
            run.stdout.contains("Example"),
            "`rtde help {command}` has no example:\n{}",
            run.stdout
        );
    }
    let run = common::run(&["--help"]);
    run.ok();
    for command in ["fields", "check", "record", "replay", "plot", "sim"] {
        assert!(run.stdout.contains(command), "{}", run.stdout);
    }
    assert!(run.stdout.contains("Start here:"), "{}", run.stdout);
}

#[test]
fn usage_mistakes_are_reported_by_clap_with_status_2() {
    let run = common::run(&[
        "record", "--robot", "r", "--sim", "--fields", "actual_q", "-o", "x.csv",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    let run = common::run(&[
        "record",
        "--fields",
        "actual_q",
        "-o",
        "x.csv",
        "--duration",
        "ten",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        run.stderr.contains("`ten` is no duration"),
        "{}",
        run.stderr
    );
}

/// Every example command in the help and in the docs' shell blocks runs, against a
/// simulator standing for the robot the example names: none is a usage error, none
/// prints an error, none hangs. Each source's commands run in order, in a directory of
/// their own, as a reader who types them one after the other would.
#[test]
fn every_example_command_in_the_help_and_the_docs_runs() {
    let _robot = examples::Robot::start();
    let broker = rtde_testkit::mosquitto::Broker::start("documented-examples");
    let fixtures = examples::Fixtures::make(broker.as_ref());
    let mut sources = examples::in_the_help();
    sources.extend(examples::in_the_docs());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes = std::sync::Mutex::new(Vec::new());
    // Two sources at a time: the machine has two cores. A command that listens on a
    // fixed port takes `examples::LISTENING` first.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some((source, commands)) =
                    sources.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    let dir = fixtures.directory(source);
                    for command in commands {
                        let outcome = examples::run(command, &dir, broker.as_ref());
                        let mut all = outcomes.lock().unwrap();
                        all.push((format!("{source}: `{command}`"), outcome));
                    }
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().unwrap();
    let ran = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, examples::Outcome::Ran))
        .count();
    let said = |pick: fn(&examples::Outcome) -> Option<&str>| -> Vec<String> {
        outcomes
            .iter()
            .filter_map(|(which, o)| pick(o).map(|why| format!("{which}: {why}")))
            .collect()
    };
    let skipped = said(|o| match o {
        examples::Outcome::Skipped(why) => Some(why),
        _ => None,
    });
    let failed = said(|o| match o {
        examples::Outcome::Failed(why) => Some(why),
        _ => None,
    });
    eprintln!("{ran} example commands ran; skipped: {skipped:#?}");
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n\n")
    );
    // The extraction itself: the help and the docs hold dozens of examples.
    assert!(ran >= 60, "only {ran} example commands found");
}

mod examples {
    //! Finding, adapting and running the example commands.

    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    use std::path::{Path, PathBuf};
    use std::process::Stdio;
    use std::time::Duration;

    use rtde_testkit::mosquitto::Broker;

    use super::common::{self, Spawned};

    /// The robot the examples name (`192.168.1.10`, `ur5e.local`, `HOST`): a simulator
    /// with every port a controller has, at a controller's port numbers, on a loopback
    /// address of its own so that nothing else on the machine holds them.
    const ROBOT_IP: Ipv4Addr = Ipv4Addr::new(127, 77, 0, 1);
    /// The names the examples give robots, replaced by [`ROBOT_IP`].
    const ROBOT_NAMES: [&str; 3] = ["192.168.1.10", "ur5e.local", "HOST"];
    /// The broker addresses the examples give (a cluster's nodes among them), replaced by
    /// the test's broker.
    const BROKER_URLS: [&str; 5] = [
        "mqtt://127.0.0.1:1883",
        "mqtt://10.0.0.5",
        "mqtt://10.0.0.1",
        "mqtt://10.0.0.2",
        "mqtt://10.0.0.3",
    ];
    /// Held while a command listens on a fixed port (`rtde sim`, `rtde replay`, `rtde
    /// view`, `--view`), so that two sources' examples never ask for the same one.
    pub(super) static LISTENING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    /// How long a command that runs until Ctrl-C runs before it gets one.
    const SETTLE: Duration = Duration::from_millis(1500);

    pub(super) struct Robot {
        _sim: rtde_sim::Sim,
    }

    impl Robot {
        /// The simulator, powered on with its brakes released, as the examples that move
        /// or send programs expect the robot to be.
        pub(super) fn start() -> Robot {
            let at = |port| SocketAddr::new(IpAddr::V4(ROBOT_IP), port);
            let sim = rtde_sim::Sim::builder()
                .bind(at(30004))
                .dashboard_on(at(29999))
                .script_ports_from(at(30001))
                .start()
                .expect("the simulator standing for the examples' robot");
            let mut dashboard = rtde_robot::dashboard::Dashboard::connect(
                at(29999),
                rtde_robot::dashboard::DashboardOptions::new(),
            )
            .expect("its Dashboard server");
            dashboard.power_on().expect("power on");
            dashboard.brake_release().expect("brake release");
            Robot { _sim: sim }
        }
    }

    /// What became of one example.
    pub(super) enum Outcome {
        Ran,
        Skipped(&'static str),
        Failed(String),
    }

    /// The examples of `rtde --help` and of each command's help, by command.
    pub(super) fn in_the_help() -> Vec<(String, Vec<String>)> {
        let top = common::run(&["--help"]);
        top.ok();
        let mut sources = vec![("rtde --help".to_owned(), of_help(&top.stdout))];
        let commands: Vec<String> = top
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            // A description wrapped onto the next line is indented past the names.
            .filter(|l| !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .filter(|c| c != "help")
            .collect();
        assert!(commands.len() >= 10, "{}", top.stdout);
        for command in commands {
            let help = common::run(&["help", &command]);
            help.ok();
            sources.push((format!("rtde help {command}"), of_help(&help.stdout)));
        }
        sources
    }

    /// The commands of a help text's examples: its indented lines that start with `rtde `,
    /// without the description that follows two spaces.
    fn of_help(text: &str) -> Vec<String> {
        text.lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with("rtde "))
            .map(|l| l.split("  ").next().unwrap_or(l).trim().to_owned())
            .collect()
    }

    /// The `rtde` lines of each doc's shell blocks, by file.
    pub(super) fn in_the_docs() -> Vec<(String, Vec<String>)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
            .expect("docs/")
            .map(|e| e.expect("a docs/ entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        files.push(root.join("README.md"));
        files
            .iter()
            .map(|path| {
                let text = std::fs::read_to_string(path).expect("a doc");
                let name = path
                    .strip_prefix(&root)
                    .unwrap_or(path)
                    .display()
                    .to_string();
                (
                    name,
                    shell_lines(&text)
                        .filter(|l| l.starts_with("rtde "))
                        .collect(),
                )
            })
            .collect()
    }

    /// Each line of the Markdown's `sh`, `bash`, `shell` and `console` blocks.
    fn shell_lines(text: &str) -> impl Iterator<Item = String> + '_ {
        let mut inside = false;
        text.lines().filter_map(move |line| {
            let fence = line.trim_start().starts_with("```");
            if fence {
                let lang = line.trim_start().trim_start_matches('`');
                inside = !inside && ["sh", "bash", "shell", "console"].contains(&lang);
                return None;
            }
            inside.then(|| line.trim().trim_start_matches("$ ").to_owned())
        })
    }

    /// The files the examples read, made once: a recording (`run.rtde`, `run.csv`,
    /// `run.mcap`, and `old.mcap` without the arm's frames), the bridge's `fleet.toml` from docs/bridge.md, and `pick.script`, the
    /// example program at its path in the repository, also under that name.
    pub(super) struct Fixtures {
        files: Vec<(PathBuf, Vec<u8>)>,
    }

    impl Fixtures {
        pub(super) fn make(broker: Option<&Broker>) -> Fixtures {
            let dir = common::scratch("examples-fixtures");
            let fields = "timestamp,actual_q,actual_qd,actual_TCP_pose";
            let record = ["record", "--fields", fields, "--duration", "1s"];
            let out = ["-o", "run.csv", "--raw", "run.rtde"];
            common::run_in(&dir, &[&record[..], &out[..]].concat()).ok();
            common::run_in(&dir, &["convert", "run.rtde", "run.mcap"]).ok();
            // A recording from before the arm's frames were recorded.
            common::run_in(&dir, &["convert", "run.rtde", "old.mcap", "--no-frames"]).ok();
            let read = |name: &str| std::fs::read(dir.join(name)).expect("a recording");
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let example = "urscript/examples/pick_and_place.script";
            let program = std::fs::read(root.join(example)).expect("the example program");
            let bridge_doc =
                std::fs::read_to_string(root.join("docs/bridge.md")).expect("docs/bridge.md");
            let fleet = bridge_doc
                .split("```toml\n# fleet.toml\n")
                .nth(1)
                .and_then(|rest| rest.split("```").next())
                .expect("docs/bridge.md shows fleet.toml");
            let files = vec![
                ("run.csv".into(), read("run.csv")),
                ("run.rtde".into(), read("run.rtde")),
                ("run.mcap".into(), read("run.mcap")),
                ("old.mcap".into(), read("old.mcap")),
                (example.into(), program.clone()),
                ("pick.script".into(), program),
                ("fleet.toml".into(), adapted(fleet, broker).into_bytes()),
            ];
            Fixtures { files }
        }

        /// A directory of its own for one source's examples, with the files.
        pub(super) fn directory(&self, source: &str) -> PathBuf {
            let name: String = source
                .chars()
                .map(|c| if c.is_alphanumeric() { c } else { '-' })
                .collect();
            let dir = common::scratch(&format!("examples-{name}"));
            for (path, bytes) in &self.files {
                let path = dir.join(path);
                std::fs::create_dir_all(path.parent().expect("a folder")).expect("a folder");
                std::fs::write(path, bytes).expect("a fixture");
            }
            for sub in ["docs", "rec", "recordings"] {
                std::fs::create_dir_all(dir.join(sub)).expect("a directory");
            }
            dir
        }
    }

    /// The text with the examples' robot and broker replaced by the test's.
    fn adapted(text: &str, broker: Option<&Broker>) -> String {
        let mut text = text.to_owned();
        for name in ROBOT_NAMES {
            text = text.replace(name, &ROBOT_IP.to_string());
        }
        if let Some(broker) = broker {
            for url in BROKER_URLS {
                text = text.replace(url, &broker.url());
            }
        }
        text
    }

    /// Runs one example in `dir`: to its end, or for [`SETTLE`] and then Ctrl-C for the
    /// ones that run until interrupted. A usage error (exit 2), an `error:` line, a panic,
    /// an end by a signal or a hang fails it; another exit status is an answer (`rtde
    /// check`'s "not on this version"), not a failure.
    pub(super) fn run(command: &str, dir: &Path, broker: Option<&Broker>) -> Outcome {
        let needs_broker = command.contains("bridge ") || command.contains("subscribe ");
        if needs_broker && broker.is_none() {
            return Outcome::Skipped("no mosquitto");
        }
        // TLS runs in tests/bridge.rs (`over_tls`), on a broker with a CA of its own.
        if command.contains("mqtts://") {
            return Outcome::Skipped("a TLS broker, and rtde with the `tls` feature");
        }
        let adapted = adapted(command, broker);
        // The tests' traffic stays on loopback: an example naming another broker fails
        // here, before anything connects to it.
        if let Some(url) = adapted
            .split_whitespace()
            .find(|w| w.starts_with("mqtt://") && !w.starts_with("mqtt://127."))
        {
            return Outcome::Failed(format!(
                "{url} is not replaced by the test's broker: add it to BROKER_URLS"
            ));
        }
        let words = match words(&adapted) {
            Ok(words) => words,
            Err(why) => return Outcome::Failed(why),
        };
        let (args, stdout_to) = match words.iter().position(|w| w == ">") {
            Some(at) => (&words[1..at], words.get(at + 1)),
            None => (&words[1..], None),
        };
        let mut args: Vec<String> = args.to_vec();
        shorten(&mut args);
        let mut cmd = common::rtde();
        cmd.args(&args).current_dir(dir);
        if let Some(file) = stdout_to {
            let file = std::fs::File::create(dir.join(file)).expect("the redirect's file");
            cmd.stdout(Stdio::from(file));
        }
        let listens = ["sim", "replay", "view"].contains(&args[0].as_str())
            || args.iter().any(|a| a == "--view");
        let _port = listens.then(|| LISTENING.lock().unwrap_or_else(|e| e.into_inner()));
        let mut child = Spawned::new(cmd);
        let settle = if runs_until_ctrl_c(&args) {
            SETTLE
        } else {
            common::COMMAND_TIMEOUT
        };
        let interrupted = match child.wait_at_most(settle) {
            Some(_) => false,
            None => {
                child.interrupt();
                true
            }
        };
        if child.wait_at_most(common::COMMAND_TIMEOUT).is_none() {
            // Dropping the child kills it.
            return Outcome::Failed(format!(
                "still running {:?} after Ctrl-C",
                common::COMMAND_TIMEOUT
            ));
        }
        judge(&common::finish(child, SETTLE), interrupted)
    }

    /// The verdict on a finished example.
    fn judge(run: &common::Run, interrupted: bool) -> Outcome {
        let says_error = run.stderr.lines().any(|l| l.starts_with("error:"));
        // Every command that runs until Ctrl-C handles it and exits 0 (`interrupt.rs`):
        // ended by a signal is a failure, interrupted or not.
        let killed = run.status.code().is_none();
        let after = if interrupted { " after Ctrl-C" } else { "" };
        if run.status.code() == Some(2) || says_error || run.stderr.contains("panicked") || killed {
            Outcome::Failed(format!("{:?}{after}\nstderr: {}", run.status, run.stderr))
        } else {
            Outcome::Ran
        }
    }

    /// Whether the command runs until Ctrl-C, as its help says; the others must end by
    /// themselves.
    fn runs_until_ctrl_c(args: &[String]) -> bool {
        let has = |flag: &str| args.iter().any(|a| a == flag);
        match args[0].as_str() {
            "sim" | "replay" | "view" | "subscribe" => true,
            "bridge" => !has("--duration"),
            "primary" => has("--robot") && !has("--count"),
            "record" => !has("--duration") && !has("--samples"),
            _ => false,
        }
    }

    /// Durations cut to a second: what an example's length shows is that it parses, and
    /// the rest of it runs the same for one second as for ten.
    fn shorten(args: &mut [String]) {
        for i in 1..args.len() {
            if args[i - 1] == "--duration" {
                args[i] = "1s".to_owned();
            }
        }
    }

    /// A command line split as a shell does: quotes kept together, a `#` comment ended.
    fn words(line: &str) -> Result<Vec<String>, String> {
        let mut words = Vec::new();
        let mut word: Option<String> = None;
        let mut quote = None;
        for c in line.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '\'' | '"') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, '#') if word.is_none() => break,
                (None, c) if c.is_whitespace() => words.extend(word.take()),
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        if quote.is_some() {
            return Err(format!("an unclosed quote in `{line}`"));
        }
        words.extend(word);
        Ok(words)
    }
}
