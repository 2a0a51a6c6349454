//! `souk serve` as an operator runs it: the real binary in a process of its own.

use std::io::{BufRead, Read};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

use souk::store::Db;

/// A `souk serve` of a test. A test that fails before it stops the server still ends it
/// (on drop): a server left behind would hold whatever it inherited, the build lock too.
pub struct Served {
    child: Child,
    /// Reads the log (stderr) as it comes, so that a full pipe never blocks the server.
    log: Option<JoinHandle<String>>,
    /// The address it bound, as `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// What it printed on stdout before serving.
    pub printed: Vec<String>,
}

impl Served {
    /// Starts `souk serve` with only `env` (and PATH) on port 0, and reads from its stdout
    /// the address the system gave it.
    pub fn start(env: &[(&str, &str)]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_souk"))
            .arg("serve")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SOUK_LISTEN", "127.0.0.1:0")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start souk serve");
        let mut stderr = child.stderr.take().expect("stderr");
        let log = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut printed = Vec::new();
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        for line in stdout.by_ref() {
            let line = line.expect("a line of souk's stdout");
            let serving = line.starts_with("Souk serves");
            printed.push(line);
            if serving {
                break;
            }
        }
        // Whatever it prints later is read and dropped: a closed pipe would fail its prints.
        std::thread::spawn(move || stdout.for_each(drop));
        let base_url = printed
            .iter()
            .find_map(|line| line.strip_prefix("listening on "))
            .unwrap_or_else(|| panic!("no `listening on` line in {printed:?}"))
            .to_owned();
        Served {
            child,
            log: Some(log),
            base_url,
            printed,
        }
    }

    /// Stops the server with SIGTERM, which it must survive cleanly; its log (stderr).
    pub fn stop(mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
        let exit = self.child.wait().expect("wait for souk");
        assert!(exit.success(), "souk exits cleanly on SIGTERM: {exit:?}");
        self.log()
    }

    /// Kills the server with SIGKILL, as a crash or the OOM killer would; its log.
    pub fn kill(mut self) -> String {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("wait for souk");
        self.log()
    }

    /// The whole log of a server that has exited.
    fn log(&mut self) -> String {
        self.log
            .take()
            .map(|reader| reader.join().expect("the log reader"))
            .unwrap_or_default()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A failing test shows what the server said.
        if std::thread::panicking() {
            eprintln!("souk serve's log:\n{}", self.log());
        }
    }
}

/// Sets up the database as `souk serve` with `env` will find it: a user and a token of
/// theirs, scopes `read write` (written straight into the store: the sign-in pages are
/// tested elsewhere).
pub async fn user_with_token(env: &[(&str, &str)]) -> (Db, String) {
    use souk::accounts::{ClientSpec, UserSpec, create_client, create_user};
    use souk::oauth::records::AccessToken;
    use souk::oauth::secret;

    let config = souk::config::Config::from_sources(None, |name| {
        env.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    })
    .expect("configuration");
    let clock = souk::clock::Clock::default();
    let db = souk::app::prepare_database(&config, &clock)
        .await
        .expect("database");
    let now = clock.now();
    let (client_id, _) = create_client(
        &db,
        ClientSpec {
            name: "Served test".into(),
            redirect_uris: vec!["https://client.test/cb".into()],
            ..ClientSpec::default()
        },
        now,
    )
    .await
    .expect("client");
    let user_id = create_user(
        &db,
        UserSpec {
            email: "served@souk.test".into(),
            password: Some("password of served".into()),
            locale: "nl-NL".into(),
            ..UserSpec::default()
        },
        now,
    )
    .await
    .expect("user");
    let token = secret::new_token();
    let record = AccessToken {
        token_hash: secret::hash(&token),
        client_id,
        user_id: Some(user_id),
        scope: "read write".into(),
        family: None,
        code_hash: None,
        issued_at: now,
        expires_at: now + 3600,
        revoked_at: None,
    };
    db.write(move |conn| {
        Box::pin(async move { souk::store::oauth::insert_access_token(conn, &record).await })
    })
    .await
    .expect("token");
    (db, token)
}
