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

/// An HTTP server that answers every request with `status` and the JSON
/// `Status` body `body`; its address.
fn answering_server(status: &'static str, body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{addr}")
}

/// Hardening round 2, items 2, 3 and 15: a failing credential plugin's
/// arguments and environment, a server's message quoting the bearer token
/// without a `token:` key, and the control characters of that message
/// never reach the output.
#[test]
fn no_plugin_command_line_or_quoted_token_is_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let quoting = answering_server(
        "401 Unauthorized",
        format!(
            "{{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"credential {TOKEN} rejected \\u001b]0;pwned\\u0007\",\"code\":401}}"
        ),
    );
    let plugin = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, 'exit 5', x, --client-secret, planted-arg-secret, --password, planted-password]\n      env: [{name: PLUGIN_KEY, value: planted-env-secret}]\n";
    let cases = [
        (
            "a server that quotes the token",
            kubeconfig(&quoting, ""),
            vec!["HTTP 401: credential [REDACTED] rejected"],
        ),
        (
            "a credential plugin that fails",
            kubeconfig(&format!("https://127.0.0.1:{}", closed_port()), plugin)
                .replace(&format!("    token: {TOKEN}\n"), ""),
            vec!["credential plugin /bin/sh failed (exit status: 5)"],
        ),
    ];
    for (i, (case, text, expected)) in cases.into_iter().enumerate() {
        let config = tmp.path().join(format!("kubeconfig-r2-{i}"));
        std::fs::write(&config, text).unwrap();
        let (code, output) = connect(&config, &[]);
        assert_eq!(code, Some(2), "{case}: {output}");
        assert_no_secret(case, &output);
        assert!(
            !output.contains('\u{1b}') && !output.contains('\u{7}'),
            "{case}: {output:?}"
        );
        assert!(
            !output.contains("--client-secret") && !output.contains("PLUGIN_KEY"),
            "{case}: {output}"
        );
        for want in expected {
            assert!(output.contains(want), "{case}: {want:?} in:\n{output}");
        }
    }
}

/// Runs `schedlab scenario ARGS... --seeds 1` in the simulator; its exit
/// code, standard output and standard error.
fn scenario(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = assert_cmd::Command::cargo_bin("schedlab")
        .unwrap()
        .arg("scenario")
        .args(args)
        .args(["--seeds", "1"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Hardening round 2, item 1: a scenario's trace path read any file (a
/// `.env`, a kubeconfig) and the error printed its first line. Outside the
/// scenario's folder it needs `--allow-trace PATH`, and then a first line
/// that is no CSV header is still not printed.
#[test]
fn a_trace_path_reads_no_file_outside_the_scenario_folder_unless_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let secrets = tmp.path().join("home");
    let scenarios = tmp.path().join("scenarios");
    std::fs::create_dir_all(&secrets).unwrap();
    std::fs::create_dir_all(&scenarios).unwrap();
    let env = secrets.join(".env");
    std::fs::write(&env, format!("AWS_SECRET_ACCESS_KEY={TOKEN}\n")).unwrap();
    let config = secrets.join("kubeconfig.json");
    std::fs::write(
        &config,
        format!("{{\"users\":[{{\"user\":{{\"token\":\"{TOKEN}\"}}}}]}}\n"),
    )
    .unwrap();
    for target in [env.clone(), config.clone()] {
        let file = scenarios.join("s.yaml");
        std::fs::write(
            &file,
            format!(
                "name: t\nduration: 1h\ncluster:\n  pools:\n    - {{name: n, count: 1, machine_type: m, hourly_price: 1, capacity: {{cpu: 8, memory: 32Gi}}}}\nphases:\n  - replay: {{trace: '{}', format: openb-pod-list}}\n",
                target.display()
            ),
        )
        .unwrap();
        let out = tmp.path().join("out");
        let (code, stdout, stderr) = scenario(&[file.as_os_str(), "--out".as_ref(), out.as_os_str()]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("an absolute path") && stderr.contains("--allow-trace PATH"),
            "{stderr}"
        );
        assert_no_secret("a trace outside the folder", &format!("{stdout}{stderr}"));

        let (code, stdout, stderr) = scenario(&[
            file.as_os_str(),
            "--allow-trace".as_ref(),
            target.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("the first line is not a CSV header"), "{stderr}");
        assert!(stderr.contains(&file.display().to_string()), "{stderr}");
        assert_no_secret("an allowed trace that is no CSV", &format!("{stdout}{stderr}"));
        assert!(!stderr.contains("AWS_SECRET") && !stderr.contains("users"), "{stderr}");
    }
}

/// Hardening round 2, item 15: a scenario's name and a `--set` value with
/// ESC, OSC and BEL reached the terminal raw.
#[test]
fn control_characters_from_a_scenario_or_a_flag_stay_off_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.yaml");
    std::fs::write(
        &file,
        "name: \"x\\e]0;pwned\\a\\e[2J\"\nduration: 1m\ncluster:\n  pools:\n    - {name: a, count: 1, machine_type: m, hourly_price: 0, capacity: {cpu: 1, memory: 1Gi}}\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let (code, stdout, stderr) = scenario(&[file.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("scenario x\\e]0;pwned\\u{7}\\e[2J"), "{stdout}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    }
    let (code, stdout, stderr) = scenario(&[
        "churn".as_ref(),
        "--set".as_ref(),
        "nodes\u{1b}]0;pwned\u{7}=3".as_ref(),
        "--out".as_ref(),
        tmp.path().join("out2").as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--set nodes\\e]0;pwned\\u{7}=3"), "{stderr}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    }
}
