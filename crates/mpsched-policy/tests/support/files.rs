//! Policy files for tests: deterministic weights and a safetensors writer.

use std::path::PathBuf;

/// Deterministic pseudo-random weights in [-0.5, 0.5).
pub fn weights(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

/// Writes a policy file (`p.json` with `desc`, `p.safetensors` with `tensors`: name, shape,
/// values) into a fresh directory named after `name`; returns the description's path.
pub fn write_policy(name: &str, desc: serde_json::Value, tensors: &[(&str, Vec<usize>, Vec<f32>)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpsched-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut header, mut data) = (serde_json::Map::new(), Vec::new());
    for (n, shape, values) in tensors {
        let start = data.len();
        data.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        let entry = serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [start, data.len()]});
        header.insert(n.to_string(), entry);
    }
    let h = serde_json::Value::Object(header).to_string();
    let mut blob = (h.len() as u64).to_le_bytes().to_vec();
    blob.extend(h.as_bytes());
    blob.extend(data);
    std::fs::write(dir.join("p.safetensors"), blob).unwrap();
    std::fs::write(dir.join("p.json"), desc.to_string()).unwrap();
    dir.join("p.json")
}
