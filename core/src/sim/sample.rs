//! Samples of every node and of the cluster.

use super::Sim;
use crate::record::RecordSink;

impl Sim {
    /// Writes the samples of now (see [`crate::sample::write_samples`]).
    pub(super) fn sample(&mut self, sink: &mut dyn RecordSink) {
        let mut written = 0u64;
        crate::sample::write_samples(
            self.now,
            &self.nodes,
            self.pending_count,
            self.bound_count,
            &mut |record| {
                written += 1;
                sink.record(record);
            },
        );
        self.summary.records += written;
        self.summary.samples += 1;
    }
}
