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

/// The histogram [`to_base64`] wrote; the error says what is wrong with `text`.
pub fn from_base64(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.as_bytes())
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| format!("histogram does not decode: {e:?}"))
}
