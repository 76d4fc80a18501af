//! Reading accessors: every component type, normalised integers
//! (KHR_mesh_quantization), interleaved views, sparse substitution, and views
//! decoded from EXT_meshopt_compression. Every offset is bounds-checked with
//! overflow-free arithmetic, so hostile files produce errors, never panics.

use super::IngestErrorKind as E;
use super::document::Document;
use gltf::json::{self, accessor::ComponentType, validation::Checked};

/// Most elements one accessor may declare. Guards allocations for accessors
/// without a buffer view (all zeros), whose size no buffer bounds.
pub(super) const MAX_ELEMENTS: u64 = 1 << 28;

/// The bytes of every buffer view, resolved once: a slice of its buffer, or
/// the output of the meshopt decoder.
pub struct Views<'a> {
    views: Vec<Result<ViewBytes<'a>, String>>,
}

struct ViewBytes<'a> {
    bytes: std::borrow::Cow<'a, [u8]>,
    stride: Option<usize>,
}

impl<'a> Views<'a> {
    /// Resolves every view of `doc` (decoding meshopt views).
    pub fn new(doc: &'a Document) -> Views<'a> {
        let views = doc
            .root
            .buffer_views
            .iter()
            .map(|v| resolve_view(doc, v))
            .collect();
        Views { views }
    }

    /// The bytes of buffer view `index`.
    pub fn bytes(&self, index: usize) -> Result<&[u8], E> {
        Ok(&self.get(index)?.bytes)
    }

    fn get(&self, index: usize) -> Result<&ViewBytes<'a>, E> {
        match self.views.get(index) {
            None => Err(E::Invalid(format!("buffer view {index} does not exist"))),
            Some(Err(problem)) => Err(E::Invalid(format!("buffer view {index}: {problem}"))),
            Some(Ok(v)) => Ok(v),
        }
    }
}

fn resolve_view<'a>(doc: &'a Document, v: &json::buffer::View) -> Result<ViewBytes<'a>, String> {
    let stride = v.byte_stride.map(|s| s.0);
    if let Some(ext) = v.extensions.as_ref().and_then(|x| {
        x.others
            .get("EXT_meshopt_compression")
            .or_else(|| x.others.get("KHR_meshopt_compression"))
    }) {
        let decoded = super::meshopt::decode_view(doc, ext)?;
        if decoded.len() as u64 > v.byte_length.0 {
            return Err(format!(
                "decoded {} bytes, more than its byteLength {}",
                decoded.len(),
                v.byte_length.0
            ));
        }
        return Ok(ViewBytes {
            bytes: decoded.into(),
            stride,
        });
    }
    let buffer = v.buffer.value();
    let data = match doc.buffers.get(buffer) {
        None => return Err(format!("buffer {buffer} does not exist")),
        Some(None) => return Err(format!("buffer {buffer} has no data (meshopt fallback)")),
        Some(Some(d)) => d,
    };
    let start = v.byte_offset.map_or(0, |o| o.0);
    let end = start
        .checked_add(v.byte_length.0)
        .filter(|&e| e <= data.len() as u64)
        .ok_or_else(|| {
            format!(
                "bytes {start}+{} run past buffer {buffer} ({} bytes)",
                v.byte_length.0,
                data.len()
            )
        })?;
    Ok(ViewBytes {
        bytes: (&data[start as usize..end as usize]).into(),
        stride,
    })
}

fn component_size(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

/// Reads one component as f64 (normalised if asked).
fn read_component(b: &[u8], c: ComponentType, normalized: bool) -> f64 {
    match c {
        ComponentType::I8 => {
            let v = f64::from(b[0] as i8);
            if normalized { (v / 127.0).max(-1.0) } else { v }
        }
        ComponentType::U8 => {
            let v = f64::from(b[0]);
            if normalized { v / 255.0 } else { v }
        }
        ComponentType::I16 => {
            let v = f64::from(i16::from_le_bytes([b[0], b[1]]));
            if normalized {
                (v / 32767.0).max(-1.0)
            } else {
                v
            }
        }
        ComponentType::U16 => {
            let v = f64::from(u16::from_le_bytes([b[0], b[1]]));
            if normalized { v / 65535.0 } else { v }
        }
        ComponentType::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        ComponentType::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    }
}

/// A contiguous run of `count` elements of `width` components each, at
/// `offset` in `bytes`, `stride` apart.
struct Layout<'b> {
    bytes: &'b [u8],
    offset: usize,
    stride: usize,
    width: usize,
    ctype: ComponentType,
}

impl Layout<'_> {
    fn element(&self, i: usize, normalized: bool, out: &mut [f64]) {
        let size = component_size(self.ctype);
        let base = self.offset + i * self.stride;
        for (k, o) in out.iter_mut().enumerate().take(self.width) {
            *o = read_component(&self.bytes[base + k * size..], self.ctype, normalized);
        }
    }
}

/// Checks that `count` elements fit in `bytes` and builds their layout.
fn layout<'b>(
    bytes: &'b [u8],
    offset: u64,
    stride: Option<usize>,
    count: u64,
    width: usize,
    ctype: ComponentType,
) -> Result<Layout<'b>, String> {
    let elem = (width * component_size(ctype)) as u64;
    let stride = stride.map_or(elem, |s| s as u64);
    if stride < elem {
        return Err(format!(
            "byteStride {stride} is smaller than an element ({elem} bytes)"
        ));
    }
    if count > 0 {
        let need = (count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(offset))
            .and_then(|x| x.checked_add(elem));
        if need.is_none_or(|n| n > bytes.len() as u64) {
            return Err(format!(
                "{count} elements of {elem} bytes (stride {stride}) at offset {offset} run past the {}-byte view",
                bytes.len()
            ));
        }
    }
    Ok(Layout {
        bytes,
        offset: offset as usize,
        stride: stride as usize,
        width,
        ctype,
    })
}

/// Reads accessor `index` as `count × width` f64 values, checking that its
/// type has `width` components.
pub fn read_f64(doc: &Document, views: &Views, index: usize, width: usize) -> Result<Vec<f64>, E> {
    let err = |problem: String| E::Invalid(format!("accessor {index}: {problem}"));
    let acc = doc
        .root
        .accessors
        .get(index)
        .ok_or_else(|| E::Invalid(format!("accessor {index} does not exist")))?;
    let ctype = match acc.component_type {
        Checked::Valid(c) => c.0,
        Checked::Invalid => return Err(err("invalid componentType".into())),
    };
    let comps = match acc.type_ {
        Checked::Valid(t) => t.multiplicity(),
        Checked::Invalid => return Err(err("invalid type".into())),
    };
    if comps != width {
        return Err(err(format!("has {comps} components, expected {width}")));
    }
    let count = acc.count.0;
    if count > MAX_ELEMENTS {
        return Err(err(format!("count {count} is larger than {MAX_ELEMENTS}")));
    }
    let n = count as usize;
    let mut out = vec![0.0f64; n * width];
    if let Some(view) = acc.buffer_view {
        let v = views.get(view.value())?;
        let l = layout(
            &v.bytes,
            acc.byte_offset.map_or(0, |o| o.0),
            v.stride,
            count,
            width,
            ctype,
        )
        .map_err(err)?;
        for (i, chunk) in out.chunks_exact_mut(width).enumerate() {
            l.element(i, acc.normalized, chunk);
        }
    }
    if let Some(sparse) = &acc.sparse {
        let sc = sparse.count.0;
        if sc > count {
            return Err(err(format!("sparse count {sc} exceeds count {count}")));
        }
        let itype = match sparse.indices.component_type {
            Checked::Valid(c) => c.0,
            Checked::Invalid => return Err(err("invalid sparse index type".into())),
        };
        let iv = views.get(sparse.indices.buffer_view.value())?;
        let il = layout(&iv.bytes, sparse.indices.byte_offset.0, None, sc, 1, itype)
            .map_err(|p| err(format!("sparse indices: {p}")))?;
        let vv = views.get(sparse.values.buffer_view.value())?;
        let vl = layout(
            &vv.bytes,
            sparse.values.byte_offset.0,
            None,
            sc,
            width,
            ctype,
        )
        .map_err(|p| err(format!("sparse values: {p}")))?;
        let mut idx = [0.0f64];
        for k in 0..sc as usize {
            il.element(k, false, &mut idx);
            let target = idx[0] as usize;
            if target >= n {
                return Err(err(format!("sparse index {target} >= count {count}")));
            }
            vl.element(
                k,
                acc.normalized,
                &mut out[target * width..(target + 1) * width],
            );
        }
    }
    Ok(out)
}

/// Reads a VEC3 accessor as f32 positions.
pub fn read_vec3(doc: &Document, views: &Views, index: usize) -> Result<Vec<[f32; 3]>, E> {
    let flat = read_f64(doc, views, index, 3)?;
    Ok(flat
        .chunks_exact(3)
        .map(|c| [c[0] as f32, c[1] as f32, c[2] as f32])
        .collect())
}

/// Reads a SCALAR integer accessor as u32 indices.
pub fn read_indices(doc: &Document, views: &Views, index: usize) -> Result<Vec<u32>, E> {
    if let Some(acc) = doc.root.accessors.get(index)
        && matches!(acc.component_type, Checked::Valid(c) if matches!(c.0, ComponentType::F32 | ComponentType::I8 | ComponentType::I16))
    {
        return Err(E::Invalid(format!(
            "accessor {index}: indices must be unsigned integers"
        )));
    }
    let flat = read_f64(doc, views, index, 1)?;
    Ok(flat.into_iter().map(|v| v as u32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_components_follow_the_spec() {
        assert_eq!(read_component(&[127], ComponentType::I8, true), 1.0);
        assert_eq!(read_component(&[0x80], ComponentType::I8, true), -1.0);
        assert_eq!(read_component(&[255], ComponentType::U8, true), 1.0);
        assert_eq!(read_component(&[0xff, 0x7f], ComponentType::I16, true), 1.0);
        assert_eq!(
            read_component(&[0x00, 0x80], ComponentType::I16, false),
            -32768.0
        );
        assert_eq!(read_component(&[0xff, 0xff], ComponentType::U16, true), 1.0);
    }

    #[test]
    fn layouts_are_bounds_checked() {
        let bytes = [0u8; 24];
        assert!(layout(&bytes, 0, None, 2, 3, ComponentType::F32).is_ok());
        assert!(layout(&bytes, 4, None, 2, 3, ComponentType::F32).is_err());
        assert!(layout(&bytes, 0, Some(8), 2, 3, ComponentType::F32).is_err());
        assert!(layout(&bytes, u64::MAX, None, 2, 3, ComponentType::F32).is_err());
        assert!(layout(&bytes, 0, Some(16), u64::MAX, 1, ComponentType::U8).is_err());
    }
}
