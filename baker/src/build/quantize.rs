//! Quantises a float tree's boxes to 16 bits per coordinate against the
//! root box, rounding outward (the compressed AABB trees of seed 002:
//! lower bounds down, upper bounds up), so every decoded box contains the
//! exact one and culling stays conservative.

use kiln_formats::level::{Node, QNode, dequantize};

const STEPS: f32 = u16::MAX as f32;

/// Returns `(origin, scale, nodes)`: decode with `origin + q · scale`.
pub fn quantize(nodes: &[Node]) -> ([f32; 3], [f32; 3], Vec<QNode>) {
    let Some(root) = nodes.first() else {
        return ([0.0; 3], [0.0; 3], Vec::new());
    };
    let origin = root.min;
    let mut scale = [0.0f32; 3];
    for k in 0..3 {
        let extent = root.max[k] - root.min[k];
        if extent > 0.0 {
            // the top step must reach the root's upper face after rounding
            let mut s = extent / STEPS;
            while dequantize(origin[k], s, u16::MAX) < root.max[k] {
                s = f32::from_bits(s.to_bits() + 1);
            }
            scale[k] = s;
        }
    }
    let q = |n: &Node| {
        let mut lo = [0u16; 3];
        let mut hi = [0u16; 3];
        for k in 0..3 {
            if scale[k] == 0.0 {
                continue; // flat axis: every box is the origin plane
            }
            let mut a = (((n.min[k] - origin[k]) / scale[k]).floor().max(0.0) as u32)
                .min(u16::MAX as u32) as u16;
            while a > 0 && dequantize(origin[k], scale[k], a) > n.min[k] {
                a -= 1;
            }
            let mut b = (((n.max[k] - origin[k]) / scale[k]).ceil().max(0.0) as u32)
                .min(u16::MAX as u32) as u16;
            while b < u16::MAX && dequantize(origin[k], scale[k], b) < n.max[k] {
                b += 1;
            }
            lo[k] = a;
            hi[k] = b;
        }
        QNode {
            min: lo,
            max: hi,
            end: n.end,
            data: n.data,
        }
    };
    let out: Vec<QNode> = nodes.iter().map(q).collect();
    // outward rounding is the whole point: check it, always (cheap)
    for (n, qn) in nodes.iter().zip(&out) {
        for k in 0..3 {
            let (lo, hi) = (
                dequantize(origin[k], scale[k], qn.min[k]),
                dequantize(origin[k], scale[k], qn.max[k]),
            );
            assert!(
                lo <= n.min[k] && hi >= n.max[k],
                "quantised box does not contain the exact box"
            );
        }
    }
    (origin, scale, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(min: [f32; 3], max: [f32; 3]) -> Node {
        Node {
            min,
            max,
            end: 1,
            data: 0,
        }
    }

    #[test]
    fn decoded_boxes_contain_the_exact_boxes() {
        let root = node([-1024.0, -4.64, 0.1], [1024.0, 17.7564, 0.1]);
        let mut nodes = vec![root];
        let mut s = 7u32;
        for _ in 0..10_000 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let f = |v: u32| (v % 10_000) as f32 / 10_000.0;
            let x = -1024.0 + 2048.0 * f(s);
            let y = -4.64 + 22.3964 * f(s >> 3);
            nodes.push(node(
                [x, y, 0.1],
                [(x + 0.37).min(1024.0), (y + 0.01).min(17.7564), 0.1],
            ));
        }
        let (origin, scale, q) = quantize(&nodes);
        assert_eq!(scale[2], 0.0, "flat axis");
        for (n, qn) in nodes.iter().zip(&q) {
            for k in 0..3 {
                assert!(dequantize(origin[k], scale[k], qn.min[k]) <= n.min[k]);
                assert!(dequantize(origin[k], scale[k], qn.max[k]) >= n.max[k]);
            }
        }
        // and stay tight: within two steps
        let n = &nodes[5];
        let qn = &q[5];
        assert!(n.min[0] - dequantize(origin[0], scale[0], qn.min[0]) <= 2.0 * scale[0]);
    }
}
