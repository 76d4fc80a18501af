//! End-to-end tests: bake real levels, open the archives, query them, and
//! compare with brute force. One test binary, one module per concern.

mod authored;
mod broken_gltf;
mod bsp;
mod character;
mod corrupt;
mod decomposition;
mod differential;
mod draco;
mod export;
mod ingest;
mod levels;
mod mass;
mod movers;
mod query_shapes;
mod rays;
mod regressions;
mod reload;
mod shells;
mod simd;
mod solid_colliders;
mod spheres;
mod tiles;
mod world;
