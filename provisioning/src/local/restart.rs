//! Restarting kube-apiserver in place, for fault tests: the same flags,
//! ports, certificates and etcd data, so clients reconnect to the same
//! cluster and watches resume.

use super::layout::{CacheLayout, StateLayout};
use super::process::{self, Probe};
use super::{APISERVER, LocalCluster, ProvisionError, STOP_GRACE, flags};
use std::path::Path;
use std::time::{Duration, Instant};

impl LocalCluster {
    /// Stops kube-apiserver (SIGTERM), keeps it down for `down_for`, starts it
    /// again and waits until it is ready. Returns how long it was unavailable.
    pub fn restart_apiserver(&mut self, cache_dir: &Path, down_for: Duration) -> Result<Duration, ProvisionError> {
        let state = StateLayout::new(&self.state_dir);
        let cache = CacheLayout::new(cache_dir);
        let t0 = Instant::now();
        process::stop(&state, APISERVER, STOP_GRACE)?;
        if let Some(old) = self.children.iter_mut().find(|c| c.name == APISERVER) {
            let _ = old.child.wait();
        }
        self.children.retain(|c| c.name != APISERVER);
        std::thread::sleep(down_for);
        let args = flags::apiserver(&state, &self.record.ports, self.record.controller_manager);
        let mut started = process::spawn(&state, APISERVER, &cache.binary(APISERVER), &args)?;
        let admin_token = super::certs::ensure(&state)?
            .token(super::certs::ADMIN)
            .map(str::to_owned)
            .ok_or_else(|| ProvisionError::Malformed {
                what: "tokens file",
                path: state.pki_file("tokens.csv"),
                detail: format!("no token for {}", super::certs::ADMIN),
            })?;
        let probe = Probe {
            url: format!("{}/readyz", self.record.server),
            ca_file: Some(self.record.ca_file.clone()),
            bearer: Some(admin_token),
        };
        let ready = process::wait_ready(&mut started, &probe, Duration::from_secs(120), None);
        self.children.push(started);
        ready?;
        Ok(t0.elapsed())
    }
}
