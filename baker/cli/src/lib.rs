//! # baker_tools: the `baker` tool's work over archives
//!
//! What the `baker` binary does beyond baking, as a library its tests and
//! the fuzz targets share: [`inspect`] (what an archive holds),
//! [`json_lines`] (`baker query`'s JSON lines, answered on a world) and
//! [`view`] (the browser viewer and its HTTP server). The bake itself is
//! the `kiln_baker` library, which depends on none of this: an engine
//! that bakes (Bevy's asset processor) links no CLI, watcher or HTTP
//! crate.

pub mod inspect;
pub mod json_lines;
pub mod view;
