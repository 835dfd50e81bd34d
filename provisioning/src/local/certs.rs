//! The PKI of the local control plane (made with openssl): a CA, the
//! apiserver's serving certificate (SAN IP 127.0.0.1), the service-account
//! key pair, and static bearer tokens.

use super::error::ProvisionError;
use super::layout::StateLayout;
use crate::external::{self, ExternalCommand};
use std::io::Read;
use std::path::Path;

/// The serving certificate's names: loopback plus the in-cluster names and
/// the first service IP, so clients addressing it either way verify it.
const SERVING_EXT: &str = "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n";

/// The token users: (user, uid, groups).
pub const ADMIN: &str = "admin";
pub const SCHEDULER: &str = "system:kube-scheduler";
pub const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
/// The identity of schedlab's own scheduler, bound to `system:kube-scheduler`.
pub const AGMARL: &str = "agmarl";
/// The identity every real node's kubelet uses, bound to `system:node`.
pub const KUBELET: &str = "kubelet";

/// One line of the apiserver's `--token-auth-file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenUser {
    pub token: String,
    pub user: String,
    pub uid: String,
    pub groups: Vec<String>,
}

/// The static tokens of one control plane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    pub users: Vec<TokenUser>,
}

impl Tokens {
    /// Fresh tokens for the five users the control plane knows.
    pub fn generate() -> Result<Self, ProvisionError> {
        let user = |user: &str, uid: &str, groups: &[&str]| -> Result<TokenUser, ProvisionError> {
            Ok(TokenUser {
                token: random_hex(16)?,
                user: user.into(),
                uid: uid.into(),
                groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            })
        };
        Ok(Self {
            users: vec![
                user(ADMIN, "uid-admin", &["system:masters"])?,
                user(SCHEDULER, "uid-sched", &[])?,
                user(CONTROLLER_MANAGER, "uid-cm", &[])?,
                user(AGMARL, "uid-agmarl", &[])?,
                user(KUBELET, "uid-kubelet", &["system:nodes"])?,
            ],
        })
    }

    /// The token of `user`, if it has one.
    pub fn token(&self, user: &str) -> Option<&str> {
        self.users.iter().find(|u| u.user == user).map(|u| u.token.as_str())
    }

    /// The token of `user`, or an error naming the tokens file of `state` that lacks it.
    pub fn require(&self, user: &str, state: &StateLayout) -> Result<String, ProvisionError> {
        self.token(user)
            .map(str::to_owned)
            .ok_or_else(|| ProvisionError::Malformed {
                what: "tokens file",
                path: state.pki_file("tokens.csv"),
                detail: format!("no token for {user}"),
            })
    }

    /// The `--token-auth-file` text: `token,user,uid[,"group1,group2"]`.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        for u in &self.users {
            out.push_str(&format!("{},{},{}", u.token, u.user, u.uid));
            if !u.groups.is_empty() {
                out.push_str(&format!(",\"{}\"", u.groups.join(",")));
            }
            out.push('\n');
        }
        out
    }

    /// Reads a file written by [`Tokens::to_csv`].
    pub fn parse(text: &str, path: &Path) -> Result<Self, ProvisionError> {
        let mut users = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (head, groups) = match line.split_once(",\"") {
                Some((head, rest)) => (head, rest.trim_end_matches('"').split(',').map(str::to_owned).collect()),
                None => (line, Vec::new()),
            };
            let fields: Vec<&str> = head.split(',').collect();
            let [token, user, uid] = fields[..] else {
                return Err(ProvisionError::Malformed {
                    what: "token line",
                    path: path.into(),
                    detail: line.into(),
                });
            };
            users.push(TokenUser {
                token: token.into(),
                user: user.into(),
                uid: uid.into(),
                groups,
            });
        }
        Ok(Self { users })
    }
}

/// `n` random bytes from the kernel, hex-encoded (secrets are not seeded draws).
fn random_hex(n: usize) -> Result<String, ProvisionError> {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(ProvisionError::io("cannot read", "/dev/urandom"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Makes the PKI and tokens in `state.pki()` unless they are already there;
/// returns the tokens.
pub fn ensure(state: &StateLayout) -> Result<Tokens, ProvisionError> {
    let pki = state.pki();
    let tokens_path = state.pki_file("tokens.csv");
    let complete = [
        "ca.crt",
        "apiserver.crt",
        "apiserver.key",
        "sa.key",
        "sa.pub",
        "tokens.csv",
    ]
    .iter()
    .all(|f| state.pki_file(f).is_file());
    if complete {
        let text = std::fs::read_to_string(&tokens_path).map_err(ProvisionError::io("cannot read", &tokens_path))?;
        let mut tokens = Tokens::parse(&text, &tokens_path)?;
        // a state folder made before a user was added gets that user's token
        let missing: Vec<TokenUser> = Tokens::generate()?
            .users
            .into_iter()
            .filter(|u| tokens.token(&u.user).is_none())
            .collect();
        if !missing.is_empty() {
            tokens.users.extend(missing);
            write_private(&tokens_path, &tokens.to_csv())?;
        }
        // a state folder made before the API server spoke to kubelets gets its client certificate
        if !state.pki_file(KUBELET_CLIENT_CRT).is_file() {
            kubelet_client(state)?;
        }
        return Ok(tokens);
    }
    std::fs::create_dir_all(&pki).map_err(ProvisionError::io("cannot create", &pki))?;
    let openssl = |args: &[&str]| openssl(state, args);
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3650",
        "-subj",
        "/CN=schedlab-local-ca",
    ])?;
    signed(state, "apiserver", "/CN=kube-apiserver", SERVING_EXT)?;
    kubelet_client(state)?;
    openssl(&["genrsa", "-out", "sa.key", "2048"])?;
    openssl(&["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"])?;
    let tokens = Tokens::generate()?;
    write_private(&tokens_path, &tokens.to_csv())?;
    for key in ["ca.key", "apiserver.key", "sa.key"] {
        restrict(&state.pki_file(key))?;
    }
    Ok(tokens)
}

/// The API server's client certificate towards kubelets (a pod's log, exec).
pub const KUBELET_CLIENT_CRT: &str = "apiserver-kubelet-client.crt";
pub const KUBELET_CLIENT_KEY: &str = "apiserver-kubelet-client.key";

/// Makes the API server's client certificate for kubelets, signed by the cluster's CA (which the kubelets of real
/// nodes trust for clients): a user in `system:masters`.
fn kubelet_client(state: &StateLayout) -> Result<(), ProvisionError> {
    signed(
        state,
        "apiserver-kubelet-client",
        "/O=system:masters/CN=kube-apiserver-kubelet-client",
        CLIENT_EXT,
    )?;
    restrict(&state.pki_file(KUBELET_CLIENT_KEY))
}

/// Makes `<name>.key` and `<name>.crt` in the PKI folder: a new key, and its certificate for `subject` with the
/// extensions `ext`, signed by the cluster's CA.
fn signed(state: &StateLayout, name: &str, subject: &str, ext: &str) -> Result<(), ProvisionError> {
    let openssl = |args: &[&str]| openssl(state, args);
    let (key, csr, crt, ext_file) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
        format!("{name}.ext"),
    );
    openssl(&[
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj", subject,
    ])?;
    let ext_path = state.pki_file(&ext_file);
    std::fs::write(&ext_path, ext).map_err(ProvisionError::io("cannot write", &ext_path))?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "3650",
        "-extfile",
        &ext_file,
        "-out",
        &crt,
    ])?;
    Ok(())
}

/// A client certificate's extensions.
const CLIENT_EXT: &str =
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n";

/// Runs openssl in the PKI folder.
fn openssl(state: &StateLayout, args: &[&str]) -> Result<(), ProvisionError> {
    external::run(
        &ExternalCommand::new(
            "openssl",
            args.iter().copied(),
            "make the local control plane's certificates",
        )
        .in_dir(state.pki()),
    )?;
    Ok(())
}

fn write_private(path: &Path, text: &str) -> Result<(), ProvisionError> {
    std::fs::write(path, text).map_err(ProvisionError::io("cannot write", path))?;
    restrict(path)
}

fn restrict(path: &Path) -> Result<(), ProvisionError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(ProvisionError::io("cannot chmod", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_through_the_csv() {
        let tokens = Tokens::generate().unwrap();
        let csv = tokens.to_csv();
        assert!(
            csv.lines()
                .next()
                .unwrap()
                .ends_with(",admin,uid-admin,\"system:masters\""),
            "{csv}"
        );
        assert!(csv.contains(",agmarl,uid-agmarl\n"), "{csv}");
        let back = Tokens::parse(&csv, Path::new("t.csv")).unwrap();
        assert_eq!(back, tokens);
        assert_eq!(back.token(AGMARL).unwrap().len(), 32);
        assert_ne!(back.token(ADMIN), back.token(AGMARL));
    }

    #[test]
    fn malformed_token_line_is_an_error() {
        assert!(matches!(
            Tokens::parse("abc,admin\n", Path::new("t")),
            Err(ProvisionError::Malformed { .. })
        ));
    }

    #[test]
    fn pki_has_a_serving_cert_for_loopback() {
        if !external::on_path("openssl") {
            return;
        }
        let root = std::env::temp_dir().join(format!("schedlab-pki-test-{}", std::process::id()));
        let state = StateLayout::new(&root);
        let tokens = ensure(&state).unwrap();
        let text = external::run(
            &ExternalCommand::new("openssl", ["x509", "-noout", "-text", "-in"], "read the serving cert")
                .arg(state.pki_file("apiserver.crt")),
        )
        .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains("IP Address:127.0.0.1"), "{text}");
        external::run(
            &ExternalCommand::new("openssl", ["verify", "-CAfile"], "verify the serving cert")
                .arg(state.pki_file("ca.crt"))
                .arg(state.pki_file("apiserver.crt")),
        )
        .unwrap();
        // A second call reuses what is there.
        assert_eq!(ensure(&state).unwrap(), tokens);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
