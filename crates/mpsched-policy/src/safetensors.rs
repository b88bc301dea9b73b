//! The safetensors format: an 8-byte little-endian header length, a JSON header mapping each
//! tensor name to `{dtype, shape, data_offsets: [begin, end]}` (offsets into the byte buffer
//! after the header), then the raw little-endian data. Only `F32` tensors are accepted.

use std::collections::BTreeMap;
use std::path::Path;

use crate::PolicyError;

/// A float32 tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Dimensions, outermost first.
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub data: Vec<f32>,
}

/// Reads every tensor of a safetensors file.
pub fn read(path: &Path) -> Result<BTreeMap<String, Tensor>, PolicyError> {
    let bytes =
        std::fs::read(path).map_err(|e| PolicyError(format!("{}: cannot read weights: {e}", path.display())))?;
    parse(&bytes).map_err(|m| PolicyError(format!("{}: {m}", path.display())))
}

/// Parses safetensors bytes (error messages without the file name).
pub fn parse(bytes: &[u8]) -> Result<BTreeMap<String, Tensor>, String> {
    // A safetensors header's length may begin with the bytes of pickle's or zip's magic
    // (0x80: a length of 128 + 256·k): the magic only names the file when the header is not
    // a safetensors one.
    let n = bytes.get(..8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    let header_ok = n > 0 && n <= bytes.len().saturating_sub(8) && bytes.get(8) == Some(&b'{');
    if !header_ok && (bytes.first() == Some(&0x80) || bytes.starts_with(b"PK")) {
        return Err("a pickle or torch.save file, not safetensors (mpsched never loads pickle)".into());
    }
    if bytes.len() < 8 {
        return Err("not a safetensors file (too short)".into());
    }
    if !header_ok {
        return Err("not a safetensors file (bad header)".into());
    }
    let header: serde_json::Value =
        serde_json::from_slice(&bytes[8..8 + n]).map_err(|e| format!("not a safetensors file (header: {e})"))?;
    let obj = header.as_object().ok_or("not a safetensors file (header is not an object)")?;
    let data = &bytes[8 + n..];
    let mut out = BTreeMap::new();
    for (name, info) in obj {
        if name == "__metadata__" {
            continue;
        }
        let dtype = info.get("dtype").and_then(|d| d.as_str()).ok_or(format!("tensor {name:?}: missing dtype"))?;
        if dtype != "F32" {
            return Err(format!("tensor {name:?}: expected dtype F32, got {dtype}"));
        }
        let shape: Vec<usize> = info
            .get("shape")
            .and_then(|s| s.as_array())
            .ok_or(format!("tensor {name:?}: missing shape"))?
            .iter()
            .map(|d| d.as_u64().map(|d| d as usize))
            .collect::<Option<_>>()
            .ok_or(format!("tensor {name:?}: bad shape"))?;
        let offs = info
            .get("data_offsets")
            .and_then(|o| o.as_array())
            .ok_or(format!("tensor {name:?}: missing data_offsets"))?;
        let (Some(a), Some(b)) = (offs.first().and_then(|x| x.as_u64()), offs.get(1).and_then(|x| x.as_u64())) else {
            return Err(format!("tensor {name:?}: bad data_offsets"));
        };
        let (a, b) = (a as usize, b as usize);
        let count: usize = shape.iter().product();
        if a > b || b > data.len() || b - a != 4 * count {
            return Err(format!("tensor {name:?}: data_offsets [{a}, {b}] do not match shape {shape:?}"));
        }
        let v: Vec<f32> = data[a..b].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        out.insert(name.clone(), Tensor { shape, data: v });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[f32]) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        for x in data {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v
    }

    #[test]
    fn reads_f32_tensors() {
        let b = file(
            r#"{"__metadata__":{"format":"x"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}}"#,
            &[1.0, 2.0, 3.0, 4.0, -5.5],
        );
        let t = parse(&b).unwrap();
        assert_eq!(t["a"].shape, vec![2, 2]);
        assert_eq!(t["a"].data, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(t["b"].data, vec![-5.5]);
    }

    #[test]
    fn rejects_pickle_and_bad_offsets() {
        assert!(parse(b"\x80\x04\x95....").unwrap_err().contains("pickle"));
        assert!(parse(b"PK\x03\x04rest-of-zip").unwrap_err().contains("pickle"));
        // A valid file whose 128-byte header length starts with pickle's 0x80 parses.
        let b = file(&format!("{:<128}", r#"{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#), &[1.5]);
        assert_eq!(b[0], 0x80);
        assert_eq!(parse(&b).unwrap()["x"].data, [1.5]);
        let b = file(r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#, &[1.0, 2.0]);
        assert!(parse(&b).unwrap_err().contains("do not match"));
        let b = file(r#"{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}"#, &[1.0, 2.0]);
        assert!(parse(&b).unwrap_err().contains("F32"));
    }
}
