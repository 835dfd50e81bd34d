//! A kubeconfig's credentials never reach a message: a token and key data
//! planted in a kubeconfig are looked for in the output of every way
//! connecting can fail, including a server that echoes the request (and so
//! the bearer token) back in its error.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

const TOKEN: &str = "planted-token-Zq8wX3";
const KEY_DATA: &str = "cGxhbnRlZC1rZXktZGF0YQ";
const CERT_DATA: &str = "cGxhbnRlZC1jZXJ0";

/// A kubeconfig whose user has the planted token and `user_extra` (YAML lines).
fn kubeconfig(server: &str, user_extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n{user_extra}contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
    )
}

/// The planted client key and certificate, as `user_extra`.
fn key_data() -> String {
    format!("    client-key-data: {KEY_DATA}\n    client-certificate-data: {CERT_DATA}\n")
}

/// Runs `scenario churn --cluster kube` on `config`; its exit code and everything it printed.
fn connect(config: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let out = assert_cmd::Command::cargo_bin("schedlab")
        .unwrap()
        .env("RUST_LOG", "debug")
        .args(["scenario", "churn", "--seeds", "1", "--cluster", "kube", "--kubeconfig"])
        .arg(config)
        .args(extra)
        .arg("--out")
        .arg(config.with_extension("out"))
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    for secret in [TOKEN, KEY_DATA, CERT_DATA, "planted"] {
        assert!(!text.contains(secret), "{what}: {secret:?} printed in:\n{text}");
    }
    assert!(!text.contains("panicked"), "{what}: {text}");
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// An HTTP server that answers every request with a 500 whose body is the
/// request itself, headers and all; its address.
fn echoing_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                request.push_str(&line);
            }
            let body = format!("bad request, you sent:\n{request}");
            let _ = write!(
                stream,
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

#[test]
fn no_error_path_of_connecting_prints_a_kubeconfigs_credentials() {
    let tmp = tempfile::tempdir().unwrap();
    let server = format!("https://127.0.0.1:{}", closed_port());
    let cases: Vec<(&str, String, Vec<&str>, Vec<&str>)> = vec![
        // (case, kubeconfig, extra flags, what the message must still say)
        (
            "YAML syntax error next to the credentials",
            kubeconfig(&server, &format!("{}  bad: [unclosed\n", key_data())),
            vec![],
            vec!["line 15, column 9"],
        ),
        (
            "a wrongly typed value quoting the file",
            kubeconfig(&server, &key_data()).replace(
                "insecure-skip-tls-verify: true",
                &format!("insecure-skip-tls-verify: {TOKEN}"),
            ),
            vec![],
            vec!["line 7", "column"],
        ),
        (
            "key data that is not base64",
            kubeconfig(&server, &key_data().replace(KEY_DATA, &format!("{KEY_DATA}!!"))),
            vec![],
            vec!["kubeconfig"],
        ),
        (
            "an unknown context",
            kubeconfig(&server, ""),
            vec!["--context", "nope"],
            vec!["nope"],
        ),
        (
            "a server nothing listens on",
            kubeconfig(&server, ""),
            vec![],
            vec!["unreachable"],
        ),
        (
            "a server that echoes the request",
            kubeconfig(&echoing_server(), ""),
            vec![],
            vec!["you sent", "[REDACTED]"],
        ),
    ];
    for (i, (case, text, extra, expected)) in cases.into_iter().enumerate() {
        let config = tmp.path().join(format!("kubeconfig-{i}"));
        std::fs::write(&config, text).unwrap();
        let (code, output) = connect(&config, &extra);
        assert_eq!(code, Some(2), "{case}: {output}");
        assert_no_secret(case, &output);
        assert!(
            output.contains(&config.display().to_string()) || !case.contains("YAML"),
            "{case}: {output}"
        );
        for want in expected {
            assert!(output.contains(want), "{case}: {want:?} in:\n{output}");
        }
    }
}
