//! Target `kubeconfig`: kubeconfig files through `kube_backend::ApiClient::connect`.
//!
//! schedlab has no function that loads a kubeconfig without connecting:
//! `ApiClient::connect` is the one path a kubeconfig takes (the bounded read,
//! kube's `Kubeconfig::read_from`, the credential-plugin probe, kube's
//! `Config::from_custom_kubeconfig`, the client with its TLS setup, then
//! `/version`), and every error on it is wrapped by `KubeError`, whose
//! redaction is what this target tests. Servers point at a loopback port
//! nothing listens on, so connecting fails at once: a kubeconfig counts as
//! accepted when it got as far as that, and rejected when it stopped earlier.
//!
//! Every generated kubeconfig carries planted credentials (a token, a
//! password, key data, a token file, auth-provider tokens, an exec plugin's
//! environment and output, a proxy's or server's userinfo), and no message
//! may show one. Structure mutations never move a credential out of its
//! field (see [`Node::Secret`]), so a credential in a message is a leak.

use crate::bytes::havoc_keeping;
use crate::generate::{pick, strings};
use crate::mutate::mutate;
use crate::oracle::{Checked, check_error, one_line};
use crate::yaml::{Node, Style, write};
use crate::{FuzzError, Target};
use base64::Engine;
use kube_backend::{ApiClient, ClientOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Duration;

/// In a generated kubeconfig, the folder of the run (files it names).
const DIR: &str = "{dir}";
/// ... and the closed port servers point at.
const PORT: &str = "{port}";
/// What every planted credential contains.
pub const MARK: &str = "PLANTED";
/// The exec plugin's environment variable whose name says it holds a credential.
const ENV_NAME: &str = "SCHEDLAB_FUZZ_TOKEN";

/// A kubeconfig, the files it names and the `--context` to use.
#[derive(Debug, Clone)]
pub struct Case {
    /// with `{dir}` and `{port}` still in it
    pub yaml: Vec<u8>,
    /// (file name in the folder, content)
    pub files: Vec<(String, Vec<u8>)>,
    pub context: Option<String>,
    pub secrets: Vec<String>,
}

/// The `kubeconfig` target: a folder, a closed port and a runtime.
#[derive(Debug)]
pub struct Kubeconfig {
    dir: tempfile::TempDir,
    port: u16,
    runtime: tokio::runtime::Runtime,
    /// what the last input earned beyond the time limit
    allowance: Duration,
}

fn runtime() -> Result<tokio::runtime::Runtime, FuzzError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| FuzzError::io("a tokio runtime", e))
}

impl Kubeconfig {
    pub fn new() -> Result<Kubeconfig, FuzzError> {
        let dir = tempfile::tempdir().map_err(|e| FuzzError::io("a temporary folder", e))?;
        // a port nothing listens on: the listener is dropped at once
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| FuzzError::io("a loopback port", e))?
            .port();
        Ok(Kubeconfig {
            dir,
            port,
            runtime: runtime()?,
            allowance: Duration::ZERO,
        })
    }
}

/// Planted credentials: each distinct, each with [`MARK`] in it.
struct Planter<'a, R> {
    rng: &'a mut R,
    planted: Vec<String>,
}

impl<R: Rng> Planter<'_, R> {
    fn secret(&mut self, what: &str) -> String {
        let s = format!("{MARK}-{what}-{:012x}", self.rng.random::<u64>() >> 16);
        self.planted.push(s.clone());
        s
    }

    /// A planted secret as base64, the way `*-data` fields hold it.
    fn data(&mut self, what: &str) -> String {
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            self.secret(what)
        );
        let b64 = base64::engine::general_purpose::STANDARD.encode(pem);
        self.planted.push(b64.clone());
        b64
    }
}

/// A server URL: loopback at the closed port, or malformed.
fn server(rng: &mut impl Rng, p: &mut Planter<'_, impl Rng>) -> Node {
    let choices = [
        "https://127.0.0.1:{port}",
        "https://127.0.0.1:{port}",
        "http://127.0.0.1:{port}",
        "https://[::1]:{port}",
        "https://localhost:{port}",
        "127.0.0.1:{port}",
        "https://127.0.0.1:{port}/prefix/",
        "https://127.0.0.1:99999",
        "",
        "https://",
        "unix:///tmp/x",
        "ftp://127.0.0.1:{port}",
        "https://127.0.0.1:{port}/a b",
        "https://127.0.0.1:{port}/\u{e9}",
    ];
    if rng.random_bool(0.05) {
        // basic auth in the URL: the password is a credential
        return Node::Secret(format!(
            "https://admin:{}@127.0.0.1:{PORT}",
            p.secret("server-password")
        ));
    }
    Node::str(*pick(rng, &choices))
}

fn cluster(rng: &mut impl Rng, p: &mut Planter<'_, impl Rng>, name: &str) -> Node {
    let mut c = vec![("server", server(rng, p))];
    match rng.random_range(0..5) {
        0 => {}
        1 => c.push((
            "certificate-authority-data",
            Node::str(
                base64::engine::general_purpose::STANDARD
                    .encode("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"),
            ),
        )),
        2 => c.push(("certificate-authority", Node::str(format!("{DIR}/ca.crt")))),
        _ => c.push(("insecure-skip-tls-verify", Node::plain(true))),
    }
    if rng.random_bool(0.1) {
        c.push(("tls-server-name", Node::str("kubernetes")));
    }
    if rng.random_bool(0.1) {
        let proxy = if rng.random_bool(0.5) {
            // a proxy's password is a credential too
            Node::Secret(format!("http://proxy:{}@127.0.0.1:{PORT}", p.secret("proxy-password")))
        } else {
            Node::str(*pick(
                rng,
                &[
                    "http://127.0.0.1:{port}",
                    "socks5://127.0.0.1:{port}",
                    "https://127.0.0.1:{port}",
                    "::",
                ],
            ))
        };
        c.push(("proxy-url", proxy));
    }
    if rng.random_bool(0.05) {
        c.push(("disable-compression", Node::plain(true)));
    }
    Node::map(vec![("name", Node::str(name)), ("cluster", Node::map(c))])
}

/// An exec credential plugin: one that cannot start, or a shell that prints
/// a credential (as kube expects it, or on failure) and exits.
fn exec(rng: &mut impl Rng, p: &mut Planter<'_, impl Rng>) -> Node {
    let token = p.secret("exec-token");
    let env_value = p.secret("exec-env");
    let json = format!(
        r#"{{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{{"token":"{token}"}}}}"#
    );
    let (command, args): (&str, Vec<String>) = match rng.random_range(0..6) {
        0 => ("/nonexistent/schedlab-fuzz-plugin", vec![]),
        1 => ("true", vec![]),
        2 => ("false", vec![]),
        3 => ("/bin/sh", vec!["-c".into(), format!("printf '%s' '{json}'")]),
        // a plugin that prints its credential and fails: kube shows the output in its error
        4 => ("/bin/sh", vec!["-c".into(), format!("printf '%s' '{json}'; exit 3")]),
        _ => (
            "/bin/sh",
            vec!["-c".into(), format!("echo 'token: {token}' >&2; exit 1")],
        ),
    };
    let mut e = vec![
        ("apiVersion", Node::str("client.authentication.k8s.io/v1beta1")),
        ("command", Node::str(command)),
        (
            "env",
            // the name says the value is a credential, so it is kept too (a value
            // under any other name is not recognisably one)
            Node::Seq(vec![Node::map(vec![
                ("name", Node::Secret(ENV_NAME.into())),
                ("value", Node::Secret(env_value)),
            ])]),
        ),
        (
            "interactiveMode",
            Node::str(*pick(rng, &["Never", "IfAvailable", "Always"])),
        ),
    ];
    if !args.is_empty() {
        // the shell's arguments hold the credential it prints
        e.push(("args", Node::Seq(args.into_iter().map(Node::Secret).collect())));
    }
    if rng.random_bool(0.3) {
        e.push(("installHint", Node::str(strings(rng))));
    }
    if rng.random_bool(0.1) {
        e.push(("provideClusterInfo", Node::plain(true)));
    }
    Node::map(e)
}

/// A user with one of the ways kubeconfigs hold credentials.
fn user(rng: &mut impl Rng, p: &mut Planter<'_, impl Rng>, name: &str, files: &mut Vec<(String, Vec<u8>)>) -> Node {
    let mut u: Vec<(&str, Node)> = Vec::new();
    match rng.random_range(0..10) {
        0..=2 => u.push(("token", Node::Secret(p.secret("token")))),
        3 => {
            let t = p.secret("token-file");
            let content = match rng.random_range(0..3) {
                0 => format!("{t}\n"),
                1 => format!("{t}\nsecond line"),
                _ => t,
            };
            files.push(("token".into(), content.into_bytes()));
            u.push(("tokenFile", Node::str(format!("{DIR}/token"))));
        }
        4 => {
            u.push(("username", Node::str("admin")));
            u.push(("password", Node::Secret(p.secret("password"))));
        }
        5 => {
            u.push(("client-certificate-data", Node::Secret(p.data("cert-data"))));
            u.push(("client-key-data", Node::Secret(p.data("key-data"))));
        }
        6 => {
            let key = p.secret("key-file");
            files.push((
                "client.key".into(),
                format!("-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----\n").into_bytes(),
            ));
            files.push(("client.crt".into(), b"not a certificate".to_vec()));
            u.push(("client-certificate", Node::str(format!("{DIR}/client.crt"))));
            u.push(("client-key", Node::str(format!("{DIR}/client.key"))));
        }
        7 => {
            let config = Node::map(vec![
                ("access-token", Node::Secret(p.secret("access-token"))),
                ("id-token", Node::Secret(p.secret("id-token"))),
                ("refresh-token", Node::Secret(p.secret("refresh-token"))),
                ("client-secret", Node::Secret(p.secret("client-secret"))),
                ("client-id", Node::str("schedlab")),
                ("idp-issuer-url", Node::str("https://127.0.0.1:{port}")),
                (
                    "expiry",
                    Node::str(*pick(rng, &["2000-01-01T00:00:00Z", "never", "2999-01-01T00:00:00Z"])),
                ),
            ]);
            u.push((
                "auth-provider",
                Node::map(vec![
                    ("name", Node::str(*pick(rng, &["oidc", "gcp", "azure", "nope"]))),
                    ("config", config),
                ]),
            ));
        }
        8 => u.push(("exec", exec(rng, p))),
        _ => {}
    }
    if rng.random_bool(0.1) {
        u.push(("as", Node::str("someone")));
        u.push(("as-groups", Node::Seq(vec![Node::str("system:masters")])));
    }
    Node::map(vec![("name", Node::str(name)), ("user", Node::map(u))])
}

/// A name for a cluster, user or context: usually plain, sometimes odd.
fn name(rng: &mut impl Rng, plain: &str) -> String {
    if rng.random_bool(0.9) {
        plain.to_string()
    } else {
        strings(rng)
    }
}

impl Target for Kubeconfig {
    type Case = Case;
    const NAME: &'static str = "kubeconfig";

    fn generate(&mut self, rng: &mut ChaCha8Rng) -> Case {
        let mut fork = rand_chacha::ChaCha8Rng::from_rng(&mut *rng);
        let mut p = Planter {
            rng: &mut fork,
            planted: Vec::new(),
        };
        let mut files = Vec::new();
        let (c, u, x) = (name(rng, "c"), name(rng, "u"), name(rng, "x"));
        let mut clusters = vec![cluster(rng, &mut p, &c)];
        let mut users = vec![user(rng, &mut p, &u, &mut files)];
        if rng.random_bool(0.2) {
            clusters.push(cluster(rng, &mut p, "other"));
            users.push(user(rng, &mut p, "other", &mut files));
        }
        if rng.random_bool(0.2) {
            files.push((
                "ca.crt".into(),
                b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".to_vec(),
            ));
        }
        let mut context = vec![("cluster", Node::str(c)), ("user", Node::str(u))];
        if rng.random_bool(0.2) {
            context.push(("namespace", Node::str(name(rng, "default"))));
        }
        let mut top = vec![
            ("apiVersion", Node::str("v1")),
            ("kind", Node::str("Config")),
            ("clusters", Node::Seq(clusters)),
            ("users", Node::Seq(users)),
            (
                "contexts",
                Node::Seq(vec![Node::map(vec![
                    ("name", Node::str(x.clone())),
                    ("context", Node::map(context)),
                ])]),
            ),
        ];
        if rng.random_bool(0.9) {
            top.push((
                "current-context",
                Node::str(if rng.random_bool(0.9) { x } else { name(rng, "gone") }),
            ));
        }
        if rng.random_bool(0.1) {
            top.push(("preferences", Node::map(vec![("colors", Node::plain(true))])));
        }
        let mut tree = Node::map(top);
        let keys = [
            "apiVersion",
            "kind",
            "clusters",
            "users",
            "contexts",
            "current-context",
            "name",
            "cluster",
            "user",
            "context",
            "server",
            "namespace",
            "token",
            "tokenFile",
            "exec",
            "command",
            "args",
            "env",
            "extensions",
            "insecure-skip-tls-verify",
            "certificate-authority-data",
            "proxy-url",
            "as",
        ];
        let mut fresh = |rng: &mut ChaCha8Rng, _: &str| match rng.random_range(0..3) {
            0 => Node::Plain(pick(rng, crate::generate::NUMBERS).to_string()),
            _ => Node::Str(strings(rng)),
        };
        let n = if rng.random_bool(0.3) {
            0
        } else {
            rng.random_range(1..=3)
        };
        mutate(&mut tree, n, &keys, &mut fresh, rng);
        let mut yaml = write(&tree, &Style::random(rng), rng).into_bytes();
        if rng.random_bool(0.2) {
            let mut keep: Vec<&str> = p.planted.iter().map(String::as_str).collect();
            keep.push(ENV_NAME);
            havoc_keeping(&mut yaml, &keep, 3, rng);
        }
        yaml.truncate(crate::bytes::MAX_INPUT);
        let context = rng.random_bool(0.1).then(|| name(rng, "x"));
        Case {
            yaml,
            files,
            context,
            secrets: p.planted,
        }
    }

    fn exercise(&mut self, case: &Case) -> Checked {
        let dir = self.dir.path();
        let fill = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .replace(DIR, &dir.display().to_string())
                .replace(PORT, &self.port.to_string())
                .into_bytes()
        };
        // only this input's files: none left over from the one before
        for stale in ["token", "client.key", "client.crt", "ca.crt"] {
            let _ = std::fs::remove_file(dir.join(stale));
        }
        let config = dir.join("config");
        let mut written = std::fs::write(&config, fill(&case.yaml));
        for (name, content) in &case.files {
            written = written.and_then(|()| std::fs::write(dir.join(name), content));
        }
        if let Err(e) = written {
            return Checked::Violation(format!("the fuzzer could not write its files: {e}"));
        }
        let opts = ClientOptions {
            kubeconfig: Some(config.clone()),
            context: case.context.clone(),
            qps: 1e6,
            burst: 1_000_000,
            timeout: Duration::from_secs(5),
        };
        self.allowance = Duration::ZERO;
        // the input before is done with (its message checked): its client's
        // credentials need no redacting any more, and kept, the register (and
        // the matcher rebuilt over it after each input) would grow to a
        // million of them
        kube_backend::redact::forget_sent();
        let result = self.runtime.block_on(ApiClient::connect(&opts));
        let err = match result {
            Ok(_) => return Checked::Accepted,
            Err(e) => e,
        };
        let msg = err.to_string();
        let path = config.display().to_string();
        let mut secrets: Vec<&str> = case.secrets.iter().map(String::as_str).collect();
        secrets.push(MARK);
        if let Some(problem) = check_error(&msg, &[&path, "API server "], &secrets) {
            return Checked::Violation(problem);
        }
        if !err.is_input_error() {
            return Checked::Violation(format!(
                "not an input error (the command would not exit 2): {}",
                one_line(&msg)
            ));
        }
        // the client was built and the kubeconfig fully used: only the server was missing
        match err {
            kube_backend::KubeError::Unreachable { .. } | kube_backend::KubeError::Timeout { .. } => {
                // a server address that is not refused at once (`[::3]`) is waited
                // for, up to the timeout: the network's time, not the parser's
                self.allowance = opts.timeout;
                Checked::Accepted
            }
            _ => Checked::Rejected,
        }
    }

    fn allowance(&self) -> Duration {
        self.allowance
    }

    fn dump(case: &Case) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(c) = &case.context {
            out.extend_from_slice(format!("# --context {}\n", one_line(c)).as_bytes());
        }
        for (name, content) in &case.files {
            out.extend_from_slice(
                format!("# file {DIR}/{name}: {}\n", one_line(&String::from_utf8_lossy(content))).as_bytes(),
            );
        }
        out.extend_from_slice(&case.yaml);
        out
    }

    fn after_panic(&mut self) {
        // a runtime a panic unwound through is not trusted again
        if let Ok(r) = runtime() {
            self.runtime = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::input_rng;

    #[test]
    fn unmutated_kubeconfigs_get_as_far_as_the_server() {
        let mut t = Kubeconfig::new().unwrap();
        let mut reached = 0;
        for i in 0..40 {
            let mut rng = input_rng("kubeconfig-test", 1, i);
            let mut p = Planter {
                rng: &mut input_rng("planter", 1, i),
                planted: Vec::new(),
            };
            let mut files = Vec::new();
            let tree = Node::map(vec![
                ("apiVersion", Node::str("v1")),
                ("kind", Node::str("Config")),
                ("clusters", Node::Seq(vec![cluster(&mut rng, &mut p, "c")])),
                ("users", Node::Seq(vec![user(&mut rng, &mut p, "u", &mut files)])),
                (
                    "contexts",
                    Node::Seq(vec![Node::map(vec![
                        ("name", Node::str("x")),
                        (
                            "context",
                            Node::map(vec![("cluster", Node::str("c")), ("user", Node::str("u"))]),
                        ),
                    ])]),
                ),
                ("current-context", Node::str("x")),
            ]);
            let case = Case {
                yaml: write(&tree, &Style::plain(), &mut rng).into_bytes(),
                files,
                context: None,
                secrets: p.planted,
            };
            match t.exercise(&case) {
                Checked::Accepted => reached += 1,
                Checked::Rejected => {}
                Checked::Violation(v) => panic!("{v}\n{}", String::from_utf8_lossy(&case.yaml)),
            }
        }
        // a quarter of the generated servers are malformed on purpose
        assert!(reached > 5, "{reached}");
    }

    #[test]
    fn every_case_plants_secrets() {
        let mut t = Kubeconfig::new().unwrap();
        for i in 0..50 {
            let case = t.generate(&mut input_rng("kubeconfig", 1, i));
            assert!(case.secrets.iter().all(|s| s.contains(MARK) || !s.is_empty()));
        }
    }
}
