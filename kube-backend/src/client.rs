//! Connecting to an API server through a kubeconfig, like kubectl does
//! (`--kubeconfig`, else `KUBECONFIG`, else `~/.kube/config`; `--context`,
//! else the current context), with client-go's client-side rate limits.

use super::error::KubeError;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use kube::config::{KubeConfigOptions, Kubeconfig};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// client-go's defaults, which kube-scheduler 1.20 also uses without a config.
pub const CLIENT_GO_QPS: f32 = 50.0;
pub const CLIENT_GO_BURST: u32 = 100;

/// How to reach an API server.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientOptions {
    /// None: `KUBECONFIG`, else `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// None: the kubeconfig's current context.
    pub context: Option<String>,
    /// Requests per second on average, and how many may go at once.
    pub qps: f32,
    pub burst: u32,
    /// How long connecting and a non-watch request may take.
    pub timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            kubeconfig: None,
            context: None,
            qps: CLIENT_GO_QPS,
            burst: CLIENT_GO_BURST,
            timeout: Duration::from_secs(10),
        }
    }
}

/// A connected client whose every request waits for the rate limiter.
#[derive(Clone)]
pub struct ApiClient {
    client: kube::Client,
    limiter: Arc<DefaultDirectRateLimiter>,
    server: String,
    qps: f32,
    burst: u32,
    /// the CA certificates (DER) the client trusts, for kubeconfigs made
    /// from this connection (see `provision::manifests`)
    root_certs: Option<Vec<Vec<u8>>>,
    accept_invalid_certs: bool,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("server", &self.server)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish()
    }
}

/// Bytes of a server's answer to `/version` read at most: an API server's
/// is a few hundred bytes.
pub const MAX_VERSION_BYTES: usize = 1 << 20;

/// Characters of a server's unexpected answer a message quotes at most.
pub const MAX_ANSWER_SHOWN: usize = 200;

/// Why `/version` did not give a version.
enum VersionFailure {
    /// the request failed (no connection, a timeout, ...)
    Request(kube::Error),
    /// the server answered something else: what to say about it
    Answer(String),
}

/// Largest kubeconfig read.
const MAX_KUBECONFIG_BYTES: u64 = 4 << 20;

/// The files kube reads when no kubeconfig is named, as it finds them: every
/// non-empty entry of `kubeconfig_env` (the `KUBECONFIG` list, merged), else
/// `home`'s `.kube/config`.
fn implicit_kubeconfigs(kubeconfig_env: Option<&std::ffi::OsStr>, home: Option<PathBuf>) -> Vec<PathBuf> {
    if let Some(list) = kubeconfig_env {
        let paths: Vec<PathBuf> = std::env::split_paths(list)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !paths.is_empty() {
            return paths;
        }
    }
    home.map(|h| h.join(".kube").join("config")).into_iter().collect()
}

/// Refuses each of `paths` that exists unless it is a regular file within the
/// kubeconfig cap, as `--kubeconfig` is: kube reads them whole, without a
/// limit (`KUBECONFIG=/dev/zero` reached 4.2 GB). A file that is missing is
/// left to kube, whose error names it.
fn check_kubeconfig_files(paths: &[PathBuf]) -> Result<(), KubeError> {
    for p in paths {
        if !p.exists() {
            continue;
        }
        schedlab_core::input::read_bounded(p, MAX_KUBECONFIG_BYTES).map_err(|e| KubeError::Kubeconfig {
            path: Some(p.clone()),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// Checks the kubeconfigs kube would read when none is named (`KUBECONFIG`'s
/// files, else `~/.kube/config`) as `--kubeconfig` is checked: each one that
/// exists must be a regular file of at most 4 MiB. For callers that let kube
/// find the kubeconfig itself (`kube::Config::infer`).
pub fn check_implicit_kubeconfigs() -> Result<(), KubeError> {
    check_kubeconfig_files(&implicit_kubeconfigs(
        std::env::var_os("KUBECONFIG").as_deref(),
        std::env::home_dir(),
    ))
}

/// Refuses the files the context's cluster and user name (the CA, the client
/// certificate and key, the token file) unless each is a regular file within
/// the kubeconfig's cap: kube reads them whole, without a limit, so
/// `client-key: /dev/zero` would fill the memory and a FIFO would block. A
/// file that is missing is left to kube, whose error names the field.
fn check_named_files(kc: &Kubeconfig, context: Option<&str>) -> Result<(), String> {
    let name = context.map(str::to_string).or_else(|| kc.current_context.clone());
    let Some(ctx) = name
        .and_then(|n| kc.contexts.iter().find(|c| c.name == n))
        .and_then(|c| c.context.as_ref())
    else {
        return Ok(());
    };
    let mut files: Vec<(&str, &String)> = Vec::new();
    if let Some(c) = kc
        .clusters
        .iter()
        .find(|c| c.name == ctx.cluster)
        .and_then(|c| c.cluster.as_ref())
    {
        files.extend(c.certificate_authority.iter().map(|f| ("certificate-authority", f)));
    }
    if let Some(u) = ctx
        .user
        .as_ref()
        .and_then(|u| kc.auth_infos.iter().find(|a| &a.name == u))
        .and_then(|a| a.auth_info.as_ref())
    {
        files.extend(u.client_certificate.iter().map(|f| ("client-certificate", f)));
        files.extend(u.client_key.iter().map(|f| ("client-key", f)));
        files.extend(u.token_file.iter().map(|f| ("tokenFile", f)));
    }
    for (field, file) in files {
        let p = std::path::Path::new(file);
        if p.exists() {
            schedlab_core::input::read_bounded(p, MAX_KUBECONFIG_BYTES).map_err(|e| format!("{field} {file}: {e}"))?;
        }
    }
    Ok(())
}

/// The field of a token kube would send as is (`token`, an auth provider's
/// `id-token` or `access-token`) that an HTTP header cannot hold: a control
/// character other than a tab, as `http::HeaderValue` refuses.
fn unusable_token(user: &kube::config::AuthInfo) -> Option<&'static str> {
    use secrecy::ExposeSecret;
    let bad = |t: &str| t.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f);
    if user.token.as_ref().is_some_and(|t| bad(t.expose_secret())) {
        return Some("token");
    }
    let provider = user.auth_provider.as_ref()?;
    ["id-token", "access-token"]
        .into_iter()
        .find(|k| provider.config.get(*k).is_some_and(|t| bad(t)))
}

/// Registers what the client will send on the user's behalf (a token, the
/// token file's token, a basic-auth password and its header value, client
/// key data, an auth provider's tokens) with [`super::redact::remember_sent`],
/// so that a server or a library quoting any of it has it redacted wherever
/// it appears, not only after a key such as `token:`.
fn remember_credentials(user: &kube::config::AuthInfo) {
    use super::redact::remember_sent;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use secrecy::ExposeSecret;
    for secret in [&user.token, &user.password, &user.client_key_data]
        .into_iter()
        .flatten()
    {
        remember_sent(secret.expose_secret());
    }
    if let Some(data) = &user.client_key_data
        && let Ok(pem) = STANDARD.decode(data.expose_secret().trim())
    {
        let pem = String::from_utf8_lossy(&pem);
        // the key as PEM, and each line of its body
        for line in pem.lines().filter(|l| !l.starts_with("-----")) {
            remember_sent(line);
        }
    }
    if let (Some(name), Some(password)) = (&user.username, &user.password) {
        remember_sent(&STANDARD.encode(format!("{name}:{}", password.expose_secret())));
    }
    if let Some(file) = &user.token_file
        && let Ok(token) = schedlab_core::input::read_bounded_string(std::path::Path::new(file), MAX_KUBECONFIG_BYTES)
    {
        remember_sent(&token);
    }
    if let Some(provider) = &user.auth_provider {
        for key in ["id-token", "access-token", "refresh-token", "client-secret"] {
            if let Some(v) = provider.config.get(key) {
                remember_sent(v);
            }
        }
    }
}

/// Runs the context user's exec credential plugin, if it has one, within
/// `opts.timeout` ([`super::credential_probe`]).
async fn probe_credentials(kc: &Kubeconfig, opts: &ClientOptions) -> Result<(), KubeError> {
    let Some(exec) = super::credential_probe::exec_of(kc, opts.context.as_deref()) else {
        return Ok(());
    };
    use super::credential_probe::ProbeFailure;
    let path = opts.kubeconfig.clone();
    super::credential_probe::probe(&exec, opts.timeout)
        .await
        .map_err(|failure| match failure {
            ProbeFailure::Hung { command } => KubeError::CredentialTimeout {
                path,
                command,
                after: opts.timeout,
            },
            ProbeFailure::Failed { command, status } => KubeError::CredentialFailed { path, command, status },
            ProbeFailure::TooMuchOutput { command } => KubeError::CredentialOutput { path, command },
        })
}

impl ApiClient {
    /// Loads the kubeconfig, builds the client and checks that the server
    /// answers (`/version`) within `opts.timeout`.
    pub async fn connect(opts: &ClientOptions) -> Result<ApiClient, KubeError> {
        // refuse bad rate limits before reading any file
        limiter(opts.qps, opts.burst)?;
        let kube_opts = KubeConfigOptions {
            context: opts.context.clone(),
            ..Default::default()
        };
        let path = opts.kubeconfig.clone();
        let config = match &path {
            Some(p) => {
                // refuse what cannot be a kubeconfig before kube reads it
                // whole (a device, a FIFO, a huge file)
                if let Err(e) = schedlab_core::input::read_bounded(p, MAX_KUBECONFIG_BYTES) {
                    return Err(KubeError::Kubeconfig {
                        path: path.clone(),
                        message: e.to_string(),
                    });
                }
                let kc = Kubeconfig::read_from(p).map_err(|e| KubeError::kubeconfig(path.clone(), &e))?;
                check_named_files(&kc, opts.context.as_deref()).map_err(|message| KubeError::Kubeconfig {
                    path: path.clone(),
                    message,
                })?;
                probe_credentials(&kc, opts).await?;
                kube::Config::from_custom_kubeconfig(kc, &kube_opts).await
            }
            None => {
                // the same checks for the files kube finds itself
                check_implicit_kubeconfigs()?;
                if let Ok(kc) = Kubeconfig::read() {
                    check_named_files(&kc, opts.context.as_deref())
                        .map_err(|message| KubeError::Kubeconfig { path: None, message })?;
                    probe_credentials(&kc, opts).await?;
                }
                kube::Config::from_kubeconfig(&kube_opts).await
            }
        }
        .map_err(|e| KubeError::kubeconfig(path.clone(), &e))?;
        ApiClient::from_config(config, opts).await
    }

    /// Like [`ApiClient::connect`], with a configuration made elsewhere, e.g.
    /// `kube::Config::infer()` for a process running in a pod (in-cluster
    /// service-account config). `opts.kubeconfig` and `opts.context` only
    /// name the origin in errors.
    pub async fn from_config(mut config: kube::Config, opts: &ClientOptions) -> Result<ApiClient, KubeError> {
        let limiter = Arc::new(limiter(opts.qps, opts.burst)?);
        let path = opts.kubeconfig.clone();
        config.connect_timeout = Some(opts.timeout);
        // shown in messages and recorded in manifests: a password in the URL stays out of both
        let server = super::redact::redact(&config.cluster_url.to_string());
        // kube joins each request's path to this URL and panics (in a task, so the
        // request only fails later, obscurely) when it lacks a scheme or a host
        if config.cluster_url.scheme().is_none() || config.cluster_url.authority().is_none() {
            return Err(KubeError::Config {
                path,
                message: format!(
                    "the server {server} is not a URL with a scheme and a host, such as https://127.0.0.1:6443"
                ),
            });
        }
        // kube puts a static token into the Authorization header with an `expect`,
        // so a token a header cannot hold panics there instead of failing
        if let Some(field) = unusable_token(&config.auth_info) {
            return Err(KubeError::Config {
                path,
                message: format!(
                    "the user's {field} holds a character an HTTP header cannot (a line break or another control \
                     character)"
                ),
            });
        }
        remember_credentials(&config.auth_info);
        let root_certs = config.root_cert.clone();
        let accept_invalid_certs = config.accept_invalid_certs;
        let client = kube::Client::try_from(config).map_err(|e| KubeError::Config {
            path: path.clone(),
            message: super::error::chain_text(&e),
        })?;
        let api = ApiClient {
            client,
            limiter,
            server,
            qps: opts.qps,
            burst: opts.burst,
            root_certs,
            accept_invalid_certs,
        };
        api.check_reachable(opts.timeout).await?;
        Ok(api)
    }

    async fn check_reachable(&self, timeout: Duration) -> Result<(), KubeError> {
        self.throttle().await;
        let timed_out = || KubeError::Timeout {
            server: self.server.clone(),
            after: timeout,
        };
        match tokio::time::timeout(timeout, self.version()).await {
            Ok(Ok(())) => Ok(()),
            // the client's own connect timeout (the same length) can win the race
            Ok(Err(VersionFailure::Request(e))) if super::error::is_timeout(&e) => Err(timed_out()),
            Ok(Err(VersionFailure::Request(e))) => Err(KubeError::Unreachable {
                server: self.server.clone(),
                message: super::error::unreachable_words(&e),
            }),
            Ok(Err(VersionFailure::Answer(message))) => Err(KubeError::Unreachable {
                server: self.server.clone(),
                message,
            }),
            Err(_) => Err(timed_out()),
        }
    }

    /// Asks the server for `/version`, reading at most [`MAX_VERSION_BYTES`]
    /// of its answer (kube's own call reads and logs an answer whole,
    /// however large).
    async fn version(&self) -> Result<(), VersionFailure> {
        use http_body_util::BodyExt;
        let request = http::Request::get("/version")
            .body(kube::client::Body::from(Vec::new()))
            .map_err(|e| VersionFailure::Answer(e.to_string()))?;
        let response = self.client.send(request).await.map_err(VersionFailure::Request)?;
        let status = response.status();
        let mut body = response.into_body();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(VersionFailure::Request)?;
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > MAX_VERSION_BYTES {
                    return Err(VersionFailure::Answer(format!(
                        "its answer to /version (HTTP {}) is larger than {} MiB, which no API server's is; it was \
                         not read further (is the address an API server's?)",
                        status.as_u16(),
                        MAX_VERSION_BYTES >> 20
                    )));
                }
                bytes.extend_from_slice(&data);
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let shown = |text: &str| schedlab_core::text::capped(&super::redact::redact(text.trim()), MAX_ANSWER_SHOWN);
        if !status.is_success() {
            // an API server's error is a Status object; say its message
            let message = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| text.to_string());
            return Err(VersionFailure::Answer(format!(
                "it answered HTTP {}: {}",
                status.as_u16(),
                shown(&message)
            )));
        }
        match serde_json::from_str::<k8s_openapi::apimachinery::pkg::version::Info>(&text) {
            Ok(_) => Ok(()),
            Err(_) => Err(VersionFailure::Answer(format!(
                "its answer to /version is not an API server's version: {}",
                shown(&text)
            ))),
        }
    }

    /// Waits until the rate limiter lets one more request go. Call it before
    /// every request (a watch counts once, when it is opened).
    pub async fn throttle(&self) {
        self.limiter.until_ready().await;
    }

    /// The client itself, for building `kube::Api`s.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The server URL, for messages and manifests.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The CA certificates (DER) this client trusts; None: the system's.
    pub fn root_certs(&self) -> Option<&[Vec<u8>]> {
        self.root_certs.as_deref()
    }

    /// Whether this client skips TLS verification (`insecure-skip-tls-verify`).
    pub fn accepts_invalid_certs(&self) -> bool {
        self.accept_invalid_certs
    }

    /// The client-side rate limits in force, for manifests.
    pub fn rate(&self) -> (f32, u32) {
        (self.qps, self.burst)
    }
}

fn limiter(qps: f32, burst: u32) -> Result<DefaultDirectRateLimiter, KubeError> {
    let bad = || {
        KubeError::Other(format!(
            "client rate limits qps={qps} burst={burst}: both must be positive"
        ))
    };
    if !(qps.is_finite() && qps > 0.0) {
        return Err(bad());
    }
    let burst = NonZeroU32::new(burst).ok_or_else(bad)?;
    let period = Duration::from_secs_f64(1.0 / f64::from(qps));
    let quota = Quota::with_period(period).ok_or_else(bad)?.allow_burst(burst);
    Ok(RateLimiter::direct(quota))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Writes a kubeconfig of one cluster (`cluster`: its fields, each on a
    /// line indented four spaces) and one user (`user`: its one field) to
    /// `path`, and returns options that read it.
    fn kubeconfig(path: &Path, cluster: &str, user: &str) -> ClientOptions {
        std::fs::write(
            path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n{cluster}users:\n- name: u\n  user:\n    {user}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
            ),
        )
        .unwrap();
        ClientOptions {
            kubeconfig: Some(path.to_path_buf()),
            timeout: Duration::from_secs(3),
            ..Default::default()
        }
    }

    #[test]
    fn refuses_limits_that_are_not_positive() {
        assert!(limiter(0.0, 10).is_err());
        assert!(limiter(f32::NAN, 10).is_err());
        assert!(limiter(10.0, 0).is_err());
        assert!(limiter(500.0, 1000).is_ok());
    }

    #[tokio::test]
    async fn a_missing_kubeconfig_names_the_file() {
        let opts = ClientOptions {
            kubeconfig: Some(PathBuf::from("/nonexistent/schedlab-kubeconfig")),
            ..Default::default()
        };
        let err = ApiClient::connect(&opts).await.unwrap_err();
        assert!(err.is_input_error());
        assert!(err.to_string().contains("/nonexistent/schedlab-kubeconfig"), "{err}");
    }

    #[tokio::test]
    async fn an_unreachable_server_fails_within_the_timeout() {
        let dir = std::env::temp_dir().join(format!("schedlab-kc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config");
        // A port nothing listens on (the listener is dropped before connecting).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let opts = kubeconfig(
            &path,
            &format!("    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\n"),
            "token: t",
        );
        let started = std::time::Instant::now();
        let err = ApiClient::connect(&opts).await.unwrap_err();
        assert!(err.is_input_error(), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let wrong_context = ClientOptions {
            context: Some("nope".into()),
            ..opts
        };
        let err = ApiClient::connect(&wrong_context).await.unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_implicit_kubeconfigs_are_kubeconfigs_list_else_the_home_one() {
        let home = Some(PathBuf::from("/home/u"));
        let list = std::ffi::OsString::from("/a/one::/b/two");
        assert_eq!(
            implicit_kubeconfigs(Some(&list), home.clone()),
            [PathBuf::from("/a/one"), PathBuf::from("/b/two")]
        );
        // an empty KUBECONFIG is as if unset
        for env in [None, Some(std::ffi::OsStr::new("")), Some(std::ffi::OsStr::new(":"))] {
            assert_eq!(
                implicit_kubeconfigs(env, home.clone()),
                [PathBuf::from("/home/u/.kube/config")]
            );
        }
        assert!(implicit_kubeconfigs(None, None).is_empty());
    }

    /// `KUBECONFIG=/dev/zero` reached 4.2 GB: the files kube finds itself get
    /// `--kubeconfig`'s checks.
    #[test]
    fn implicit_kubeconfigs_are_read_only_when_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let fine = dir.path().join("fine");
        std::fs::write(&fine, "apiVersion: v1\nkind: Config\n").unwrap();
        let missing = dir.path().join("missing");
        check_kubeconfig_files(&[fine.clone(), missing.clone()]).unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'#'; (MAX_KUBECONFIG_BYTES + 1) as usize]).unwrap();
        let mut refused = vec![big, dir.path().to_path_buf()];
        if std::path::Path::new("/dev/zero").exists() {
            refused.push(PathBuf::from("/dev/zero"));
        }
        for bad in refused {
            let err = check_kubeconfig_files(&[fine.clone(), bad.clone()]).unwrap_err();
            assert!(err.is_input_error(), "{err}");
            let text = err.to_string();
            assert!(text.starts_with(&format!("kubeconfig {}: ", bad.display())), "{text}");
            assert!(
                text.contains("not a regular file") || text.contains("cap of 4 MiB"),
                "{text}"
            );
        }
    }

    /// Found by schedlab-fuzz (kubeconfig): `client-certificate: /dev/zero`
    /// made kube read without end, until the kernel killed the process.
    #[tokio::test]
    async fn files_a_kubeconfig_names_are_read_only_when_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        let big = dir.path().join("big.key");
        std::fs::write(&big, vec![b'x'; (MAX_KUBECONFIG_BYTES + 1) as usize]).unwrap();
        let folder = dir.path().display().to_string();
        let mut named = vec![
            ("client-certificate", folder.clone()),
            ("client-key", big.display().to_string()),
        ];
        if std::path::Path::new("/dev/zero").exists() {
            named.push(("client-certificate", "/dev/zero".into()));
            named.push(("tokenFile", "/dev/zero".into()));
        }
        for (field, file) in named {
            let opts = kubeconfig(&path, "    server: https://127.0.0.1:1\n", &format!("{field}: {file}"));
            let started = std::time::Instant::now();
            let err = ApiClient::connect(&opts).await.unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(3), "{field} {file}");
            let shown = err.to_string();
            assert!(matches!(err, KubeError::Kubeconfig { .. }), "{shown}");
            assert!(shown.contains(&format!("{field} {file}: ")), "{shown}");
        }
    }

    /// Found by schedlab-fuzz (kubeconfig): a token with a control character
    /// made kube's client builder panic (tower-http's `expect` on the header).
    #[tokio::test]
    async fn a_token_a_header_cannot_hold_is_refused_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        for (user, field) in [
            ("token: \"tok\\u0001en\"", "token"),
            ("token: \"tok\\nen\"", "token"),
            (
                "auth-provider: {name: gcp, config: {id-token: \"a\\u007fb\"}}",
                "id-token",
            ),
        ] {
            let opts = kubeconfig(
                &path,
                "    server: https://127.0.0.1:1\n    insecure-skip-tls-verify: true\n",
                user,
            );
            let err = ApiClient::connect(&opts).await.unwrap_err();
            assert!(matches!(err, KubeError::Config { .. }), "{user}: {err}");
            assert!(
                err.to_string()
                    .contains(&format!("the user's {field} holds a character")),
                "{err}"
            );
        }
    }

    /// Found by schedlab-fuzz (kubeconfig): a server without a scheme
    /// (`127.0.0.1:6443`) made kube's client panic on the first request.
    #[tokio::test]
    async fn a_server_without_a_scheme_is_refused_before_any_request() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        for server in ["127.0.0.1:6443", "localhost", "a"] {
            let opts = kubeconfig(&path, &format!("    server: \"{server}\"\n"), "token: t");
            let err = ApiClient::connect(&opts).await.unwrap_err();
            assert!(matches!(err, KubeError::Config { .. }), "{server}: {err}");
            assert!(err.to_string().contains("not a URL with a scheme and a host"), "{err}");
            assert!(err.is_input_error());
        }
    }

    /// Found by schedlab-fuzz (kubeconfig): a password in the server's or the
    /// proxy's URL was shown in the error.
    #[tokio::test]
    async fn a_password_in_a_server_or_proxy_url_is_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        for extra in ["", "    proxy-url: http://proxy:pw-Zq8wX3@127.0.0.1:3128\n"] {
            let opts = kubeconfig(
                &path,
                &format!(
                    "    server: https://admin:pw-Zq8wX3@127.0.0.1:{port}\n    insecure-skip-tls-verify: true\n{extra}"
                ),
                "token: t",
            );
            let shown = ApiClient::connect(&opts).await.unwrap_err().to_string();
            assert!(!shown.contains("pw-Zq8wX3"), "{shown}");
            assert!(shown.contains(crate::redact::REDACTED), "{shown}");
        }
    }

    /// A plain-HTTP server on 127.0.0.1 that answers every request with
    /// `head` (status line and headers, without the blank line) and then
    /// `body` repeated `times` times; its port.
    fn serve(head: String, body: Vec<u8>, times: usize) -> u16 {
        use std::io::{BufRead, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let head = head.clone();
                let body = body.clone();
                std::thread::spawn(move || {
                    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                        line.clear();
                    }
                    let length = body.len() * times;
                    if stream
                        .write_all(format!("{head}\r\nContent-Length: {length}\r\n\r\n").as_bytes())
                        .is_err()
                    {
                        return;
                    }
                    for _ in 0..times {
                        if stream.write_all(&body).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        port
    }

    /// Hardening round 2, item 8: kube read a 600 MB `/version` answer
    /// whole (1.86 GB of memory), logged it in one line and then said the
    /// server "closed the connection without answering".
    #[tokio::test]
    async fn a_huge_version_answer_is_not_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let chunk = vec![b'x'; 1 << 16];
        // 640 MiB announced; the client stops after its cap
        let port = serve(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json".into(),
            chunk,
            10_240,
        );
        let opts = kubeconfig(
            &dir.path().join("config"),
            &format!("    server: http://127.0.0.1:{port}\n"),
            "token: t",
        );
        let started = std::time::Instant::now();
        let err = ApiClient::connect(&opts).await.unwrap_err();
        let shown = err.to_string();
        assert!(matches!(err, KubeError::Unreachable { .. }), "{shown}");
        assert!(shown.contains("larger than 1 MiB"), "{shown}");
        assert!(shown.len() < 400, "{} bytes", shown.len());
        assert!(started.elapsed() < Duration::from_secs(3));

        // a small answer that is no version is quoted, capped
        let port = serve(
            "HTTP/1.1 200 OK".into(),
            format!("<html>{}", "y".repeat(5000)).into_bytes(),
            1,
        );
        let opts = kubeconfig(
            &dir.path().join("config"),
            &format!("    server: http://127.0.0.1:{port}\n"),
            "token: t",
        );
        let shown = ApiClient::connect(&opts).await.unwrap_err().to_string();
        assert!(shown.contains("not an API server's version: <html>yyy"), "{shown}");
        assert!(shown.len() < 400, "{} bytes", shown.len());
    }

    /// Hardening round 2, items 3 and 15: a 401 whose message quotes the
    /// bearer token without a `token:` key printed it, and its control
    /// characters reached the terminal.
    #[tokio::test]
    async fn a_server_quoting_the_sent_token_has_it_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let token = "sent-bearer-Qx81vT0pA";
        let body = format!(
            "{{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"the credential {token} is not valid \\u001b]0;pwned\\u0007\",\"code\":401}}"
        );
        let port = serve(
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json".into(),
            body.into_bytes(),
            1,
        );
        let opts = kubeconfig(
            &dir.path().join("config"),
            &format!("    server: http://127.0.0.1:{port}\n"),
            &format!("token: {token}"),
        );
        let shown = ApiClient::connect(&opts).await.unwrap_err().to_string();
        assert!(
            shown.contains("HTTP 401: the credential [REDACTED] is not valid"),
            "{shown}"
        );
        assert!(!shown.contains(token), "{shown}");
        assert!(!shown.contains(['\u{1b}', '\u{7}']), "{shown:?}");
    }

    /// Hardening round 2, item 2: a failing credential plugin is named by
    /// its program and exit status, not by its command line.
    #[tokio::test]
    async fn a_failing_credential_plugin_is_named_without_its_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let opts = kubeconfig(
            &dir.path().join("config"),
            "    server: http://127.0.0.1:1\n",
            "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, 'exit 4', x, --client-secret, arg-s3cr3t], env: [{name: PASSWORD, value: env-s3cr3t}]}",
        );
        let err = ApiClient::connect(&opts).await.unwrap_err();
        let shown = err.to_string();
        assert!(matches!(err, KubeError::CredentialFailed { .. }), "{shown}");
        assert!(err.is_input_error());
        assert!(
            shown.contains("credential plugin /bin/sh failed (exit status: 4)"),
            "{shown}"
        );
        assert!(
            !shown.contains("s3cr3t") && !shown.contains("--client-secret"),
            "{shown}"
        );
    }
}
