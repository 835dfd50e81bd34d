//! The Debian packages the local control plane needs, and installing the
//! missing ones with apt-get (plus a `deb-src` entry when the Kubernetes
//! source package has to be fetched).

use super::error::ProvisionError;
use crate::external::{self, ExternalCommand};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Needed to run the control plane from cached binaries.
pub const RUNTIME_PACKAGES: &[&str] = &["etcd-server", "openssl", "curl", "ca-certificates"];

/// Needed on top of [`RUNTIME_PACKAGES`] to fetch and build the binaries.
pub const BUILD_PACKAGES: &[&str] = &[
    "golang-go",
    "dpkg-dev",
    "golang-github-modern-go-reflect2-dev",
    // the pause program: a static C binary
    "gcc",
    "libc6-dev",
];

/// Where apt reads its sources, in the order apt does.
const SOURCES_DIR: &str = "/etc/apt/sources.list.d";
const SOURCES_LIST: &str = "/etc/apt/sources.list";
/// The file this module writes when it must add a deb-src entry.
pub const DEB_SRC_FILE: &str = "/etc/apt/sources.list.d/schedlab-k8s-src.sources";

/// What [`ensure`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackagesReport {
    pub installed: Vec<String>,
    pub added_deb_src: bool,
}

/// The packages of `required` that `dpkg-query -W -f '${Package} ${db:Status-Status}\n'`
/// does not report as installed, in the order of `required`.
pub fn missing(required: &[&str], dpkg_query_output: &str) -> Vec<String> {
    let installed: BTreeSet<&str> = dpkg_query_output
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            // Multi-arch packages are reported as name:arch.
            let name = name.split(':').next().unwrap_or(name);
            (words.next() == Some("installed")).then_some(name)
        })
        .collect();
    required
        .iter()
        .filter(|p| !installed.contains(**p))
        .map(|p| (*p).to_owned())
        .collect()
}

/// One apt source: the kind of entry and where it points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AptSource {
    pub deb_src: bool,
    pub uri: String,
    pub suites: Vec<String>,
    pub signed_by: Option<String>,
}

/// Parses apt sources in either format: one-line (`deb [opts] URI suite comp...`)
/// or deb822 (`Types:`/`URIs:`/`Suites:` stanzas).
pub fn parse_sources(text: &str) -> Vec<AptSource> {
    let mut out = Vec::new();
    let mut stanza: Vec<(String, String)> = Vec::new();
    let flush = |stanza: &mut Vec<(String, String)>, out: &mut Vec<AptSource>| {
        let get = |key: &str| {
            stanza
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| v.clone())
        };
        if let (Some(types), Some(uris)) = (get("Types"), get("URIs")) {
            let suites: Vec<String> = get("Suites")
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            let signed_by = get("Signed-By");
            for kind in types.split_whitespace() {
                for uri in uris.split_whitespace() {
                    out.push(AptSource {
                        deb_src: kind == "deb-src",
                        uri: uri.to_owned(),
                        suites: suites.clone(),
                        signed_by: signed_by.clone(),
                    });
                }
            }
        }
        stanza.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            flush(&mut stanza, &mut out);
            continue;
        }
        if trimmed.starts_with('#') {
            continue;
        }
        if let Some(rest) = trimmed
            .strip_prefix("deb-src ")
            .or_else(|| trimmed.strip_prefix("deb "))
        {
            let deb_src = trimmed.starts_with("deb-src");
            let mut words: Vec<&str> = rest.split_whitespace().collect();
            if words.first().is_some_and(|w| w.starts_with('[')) {
                let end = words.iter().position(|w| w.ends_with(']')).unwrap_or(0);
                words.drain(..=end);
            }
            if let (Some(uri), Some(suite)) = (words.first(), words.get(1)) {
                out.push(AptSource {
                    deb_src,
                    uri: (*uri).to_owned(),
                    suites: vec![(*suite).to_owned()],
                    signed_by: None,
                });
            }
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            stanza.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    flush(&mut stanza, &mut out);
    out
}

/// Whether some source already offers Debian source packages.
pub fn has_deb_src(sources: &[AptSource]) -> bool {
    sources.iter().any(|s| s.deb_src)
}

/// The deb-src stanza mirroring the main Debian archive among `sources`
/// (not the security archive, not third-party repositories).
pub fn deb_src_entry(sources: &[AptSource]) -> Option<String> {
    let main = sources
        .iter()
        .find(|s| !s.deb_src && s.uri.contains("/debian") && !s.uri.contains("security") && !s.suites.is_empty())?;
    let mut suites: Vec<String> = main.suites.clone();
    // Point releases land in <suite>-updates first; the facts use both.
    if suites.len() == 1 && !suites[0].contains('-') {
        suites.push(format!("{}-updates", suites[0]));
    }
    let signed_by = main
        .signed_by
        .clone()
        .unwrap_or_else(|| "/usr/share/keyrings/debian-archive-keyring.gpg".into());
    Some(format!(
        "Types: deb-src\nURIs: {}\nSuites: {}\nComponents: main\nSigned-By: {signed_by}\n",
        main.uri,
        suites.join(" ")
    ))
}

fn source_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from(SOURCES_LIST)];
    if let Ok(entries) = std::fs::read_dir(SOURCES_DIR) {
        let mut more: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "list" || e == "sources"))
            .collect();
        more.sort();
        files.extend(more);
    }
    files
}

fn read_sources() -> Vec<AptSource> {
    source_files()
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| parse_sources(&text))
        .collect()
}

fn query_missing(required: &[&str]) -> Result<Vec<String>, ProvisionError> {
    // dpkg-query exits 1 when some package is unknown; its stdout still lists the known ones.
    let query = ExternalCommand::new(
        "dpkg-query",
        ["-W", "-f", "${Package} ${db:Status-Status}\\n"],
        "see which Debian packages are installed",
    )
    .args(required.iter().copied());
    let output = external::output(&query)?;
    Ok(missing(required, &String::from_utf8_lossy(&output.stdout)))
}

/// Installs what is missing: the runtime packages and `extra` always, the
/// build packages and a deb-src entry when `for_build`.
pub fn ensure(for_build: bool, extra: &[&str]) -> Result<PackagesReport, ProvisionError> {
    let mut required: Vec<&str> = RUNTIME_PACKAGES.to_vec();
    required.extend_from_slice(extra);
    if for_build {
        required.extend_from_slice(BUILD_PACKAGES);
    }
    let need = query_missing(&required)?;
    let mut report = PackagesReport::default();
    if for_build {
        let sources = read_sources();
        if !has_deb_src(&sources) {
            let entry = deb_src_entry(&sources).ok_or(ProvisionError::NoDebianArchive)?;
            std::fs::write(DEB_SRC_FILE, entry).map_err(ProvisionError::io("cannot write", DEB_SRC_FILE))?;
            report.added_deb_src = true;
        }
    }
    // The source download needs fresh deb-src indexes, so a build always updates.
    if need.is_empty() && !for_build {
        return Ok(report);
    }
    external::run(
        &ExternalCommand::new("apt-get", ["update", "-qq"], "update the package indexes")
            .with_env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    if !need.is_empty() {
        tracing::info!(packages = ?need, "installing Debian packages");
        external::run(
            &ExternalCommand::new(
                "apt-get",
                ["install", "-y", "-qq", "--no-install-recommends"],
                "install the packages the local control plane needs",
            )
            .args(&need)
            .with_env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
        report.installed = need;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_lists_uninstalled_and_unknown_packages_in_order() {
        let out = "openssl installed\ncurl not-installed\netcd-server:amd64 installed\n";
        assert_eq!(
            missing(&["curl", "etcd-server", "openssl", "golang-go"], out),
            vec!["curl", "golang-go"]
        );
        assert!(missing(&["openssl"], out).is_empty());
        assert_eq!(missing(&["openssl"], ""), vec!["openssl"]);
    }

    const DEB822: &str = "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\n";

    #[test]
    fn deb822_sources_without_deb_src_get_a_mirror_entry() {
        let mut sources = parse_sources("deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n");
        sources.extend(parse_sources(DEB822));
        assert_eq!(sources.len(), 3);
        assert!(!has_deb_src(&sources));
        let entry = deb_src_entry(&sources).unwrap();
        assert_eq!(
            entry,
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        );
    }

    #[test]
    fn one_line_sources_are_parsed_with_options() {
        let sources = parse_sources(
            "deb [arch=amd64] http://ftp.de.debian.org/debian bookworm main\ndeb-src http://ftp.de.debian.org/debian bookworm main\n",
        );
        assert_eq!(sources.len(), 2);
        assert!(has_deb_src(&sources));
        assert_eq!(sources[0].uri, "http://ftp.de.debian.org/debian");
        let entry = deb_src_entry(&sources).unwrap();
        assert!(entry.contains("Suites: bookworm bookworm-updates\n"), "{entry}");
    }

    #[test]
    fn no_debian_archive_means_no_entry() {
        let sources = parse_sources("deb https://deb.nodesource.com/node_20.x nodistro main\n");
        assert_eq!(deb_src_entry(&sources), None);
    }
}
