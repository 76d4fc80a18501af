//! EXT_meshopt_compression (and its ratified twin KHR_meshopt_compression):
//! decodes a compressed buffer view with meshoptimizer's decoders and
//! applies its filter.
//!
//! The C decoders `assert` on invalid sizes, so every parameter is checked
//! here first: a hostile file gets an error, never an abort.

use super::document::Document;
use meshopt::ffi;
use serde_json::Value;

/// Decodes one compressed view described by the extension object `ext`.
pub fn decode_view(doc: &Document, ext: &Value) -> Result<Vec<u8>, String> {
    let field = |k: &str| ext.get(k).and_then(Value::as_u64);
    let buffer = field("buffer").ok_or("meshopt extension without a buffer")? as usize;
    let offset = field("byteOffset").unwrap_or(0);
    let length = field("byteLength").ok_or("meshopt extension without byteLength")?;
    let stride = field("byteStride").ok_or("meshopt extension without byteStride")? as usize;
    let count = field("count").ok_or("meshopt extension without count")? as usize;
    let mode = ext.get("mode").and_then(Value::as_str).unwrap_or("");
    let filter = ext.get("filter").and_then(Value::as_str).unwrap_or("NONE");

    let data = match doc.buffers.get(buffer) {
        Some(Some(d)) => d,
        Some(None) => return Err(format!("meshopt source buffer {buffer} has no data")),
        None => return Err(format!("meshopt source buffer {buffer} does not exist")),
    };
    let end = offset
        .checked_add(length)
        .filter(|&e| e <= data.len() as u64)
        .ok_or_else(|| format!("meshopt source bytes run past buffer {buffer}"))?;
    let src = &data[offset as usize..end as usize];
    let total = count
        .checked_mul(stride)
        .filter(|&t| t <= 1 << 30)
        .ok_or("meshopt view is too large")?;

    // u32 storage keeps the output 4-byte aligned, as the filters require.
    let mut dst = vec![0u32; total.div_ceil(4)];
    let rc = match mode {
        "ATTRIBUTES" => {
            if stride == 0 || !stride.is_multiple_of(4) || stride > 256 {
                return Err(format!(
                    "meshopt ATTRIBUTES byteStride {stride} is not a multiple of 4 in 4..=256"
                ));
            }
            // SAFETY: `dst` holds `count * stride` bytes (rounded up to whole
            // u32s); the decoder writes exactly that many and reads at most
            // `src.len()` bytes from `src`. The stride was checked above, so
            // the decoder's own parameter asserts cannot fire.
            unsafe {
                ffi::meshopt_decodeVertexBuffer(
                    dst.as_mut_ptr().cast(),
                    count,
                    stride,
                    src.as_ptr(),
                    src.len(),
                )
            }
        }
        "TRIANGLES" | "INDICES" => {
            if stride != 2 && stride != 4 {
                return Err(format!("meshopt {mode} byteStride {stride} is not 2 or 4"));
            }
            if mode == "TRIANGLES" && !count.is_multiple_of(3) {
                return Err(format!(
                    "meshopt TRIANGLES count {count} is not a multiple of 3"
                ));
            }
            let decode = if mode == "TRIANGLES" {
                ffi::meshopt_decodeIndexBuffer
            } else {
                ffi::meshopt_decodeIndexSequence
            };
            // SAFETY: as above: `dst` holds `count * stride` bytes, `stride`
            // is 2 or 4 and `count` is a multiple of 3 for triangle lists.
            unsafe {
                decode(
                    dst.as_mut_ptr().cast(),
                    count,
                    stride,
                    src.as_ptr(),
                    src.len(),
                )
            }
        }
        other => return Err(format!("unknown meshopt mode {other:?}")),
    };
    if rc != 0 {
        return Err(format!("meshopt decoder rejected the data (code {rc})"));
    }
    if filter != "NONE" {
        if mode != "ATTRIBUTES" {
            return Err(format!("meshopt filter {filter} on a {mode} view"));
        }
        let ok = match filter {
            "OCTAHEDRAL" | "COLOR" => stride == 4 || stride == 8,
            "QUATERNION" => stride == 8,
            "EXPONENTIAL" => stride.is_multiple_of(4),
            _ => return Err(format!("unknown meshopt filter {filter:?}")),
        };
        if !ok {
            return Err(format!("meshopt filter {filter} with byteStride {stride}"));
        }
        let f = match filter {
            "OCTAHEDRAL" => ffi::meshopt_decodeFilterOct,
            "COLOR" => ffi::meshopt_decodeFilterColor,
            "QUATERNION" => ffi::meshopt_decodeFilterQuat,
            _ => ffi::meshopt_decodeFilterExp,
        };
        // SAFETY: `dst` holds `count * stride` bytes, 4-byte aligned, and the
        // stride is one this filter accepts (checked just above).
        unsafe { f(dst.as_mut_ptr().cast(), count, stride) };
    }
    let mut out: Vec<u8> = dst.iter().flat_map(|w| w.to_ne_bytes()).collect();
    out.truncate(total);
    Ok(out)
}
