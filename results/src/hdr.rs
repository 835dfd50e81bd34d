//! HdrHistograms in the run folder's files: V2 format, uncompressed,
//! base64, so any HdrHistogram implementation can read them back.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

/// `histogram` in V2 format, base64; the error says what failed.
pub fn to_base64(histogram: &Histogram<u64>) -> Result<String, String> {
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(histogram, &mut bytes)
        .map_err(|e| format!("histogram not serialised: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A histogram as the run folder's files hold it ([`to_base64`]): a few KB,
/// where the histogram itself holds tens of KB of counts. A run's metrics
/// keep their latencies so, since a summary holds thousands of runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedHistogram(String);

impl EncodedHistogram {
    pub fn encode(histogram: &Histogram<u64>) -> Result<Self, String> {
        to_base64(histogram).map(EncodedHistogram)
    }
    /// The V2 format, uncompressed, base64.
    pub fn base64(&self) -> &str {
        &self.0
    }
    pub fn decode(&self) -> Result<Histogram<u64>, String> {
        from_base64(&self.0)
    }
}

/// The V2 format's cookie (uncompressed, as [`to_base64`] writes it) and
/// header: cookie, payload length, offset, digits, lowest, highest, ratio.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_HEADER_BYTES: usize = 40;

/// The histogram [`to_base64`] wrote; the error says what is wrong with `text`.
pub fn from_base64(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    // hdrhistogram allocates the payload length a header claims before it
    // reads the payload (found by schedlab-fuzz: 2 GB for a 900-byte text),
    // and an inflated compressed payload cannot be measured first: only the
    // uncompressed form, holding all it claims, goes to it
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    if word(0) != Some(V2_COOKIE) {
        return Err("histogram does not decode: not an uncompressed V2 HdrHistogram".to_string());
    }
    let claimed = word(4).map_or(0, |n| n as usize);
    let held = bytes.len().saturating_sub(V2_HEADER_BYTES);
    if claimed > held {
        return Err(format!(
            "histogram does not decode: its header claims {claimed} bytes of counts and {held} follow"
        ));
    }
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram does not decode: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Histogram<u64> {
        let mut h = Histogram::new(3).unwrap();
        for v in [1u64, 5, 1000, 123_456] {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn a_written_histogram_reads_back() {
        let h = sample();
        assert_eq!(from_base64(&to_base64(&h).unwrap()).unwrap(), h);
        let kept = EncodedHistogram::encode(&h).unwrap();
        assert_eq!(kept.decode().unwrap(), h);
        assert_eq!(kept.base64(), to_base64(&h).unwrap());
    }

    /// Found by schedlab-fuzz (records): a payload length of 1.9 GB in the
    /// header of a 900-byte histogram took 1.9 GB and seconds to refuse.
    #[test]
    fn a_header_that_claims_more_than_the_text_holds_is_refused_at_once() {
        let b64 = base64::engine::general_purpose::STANDARD;
        let mut bytes = b64.decode(to_base64(&sample()).unwrap()).unwrap();
        bytes[4..8].copy_from_slice(&0x7400_0369u32.to_be_bytes());
        let err = from_base64(&b64.encode(&bytes)).unwrap_err();
        assert!(err.contains("claims 1946157929 bytes"), "{err}");
        // the compressed form is refused too: its inflated length cannot be checked first
        bytes[..4].copy_from_slice(&(0x1c84_9304u32 | 0x10).to_be_bytes());
        assert!(
            from_base64(&b64.encode(&bytes))
                .unwrap_err()
                .contains("not an uncompressed V2")
        );
        assert!(from_base64("").unwrap_err().contains("not an uncompressed V2"));
    }
}
