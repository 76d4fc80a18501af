//! # kiln-bevy: Kiln in Bevy
//!
//! Collision baked offline, answered in the ECS.
//!
//! - **Assets.** `.kiln` archives load as [`KilnArchive`] assets, hot
//!   reloaded when `baker watch` (or anything) replaces the file (feature
//!   `hot_reload`); a broken archive is reported as a [`KilnLevelFailed`]
//!   message and the last good level stays. With Bevy's asset processor
//!   (`AssetMode::Processed`, feature `bake`), `*.kiln.glb` and
//!   `*.kiln.gltf` sources — or any glTF whose `.meta` names the
//!   [`KilnBake`] processor — are baked into archives at processing time,
//!   with the bake settings in the `.meta` file ([`KilnBakeSettings`]), so
//!   a shipped game loads archives and never bakes.
//! - **The level.** An entity with a [`KilnLevel`] (a handle to an
//!   archive) makes the level the world's. Its movers and triggers appear
//!   as child entities named as in the source ([`KilnMover`],
//!   [`KilnTrigger`]): move a mover by its `Transform`.
//! - **Worlds of tiles.** `.kilnworld` manifests load as
//!   [`KilnWorldManifest`] assets; an entity with [`KilnTiles`] streams
//!   its tiles around the entities marked [`KilnFocus`] (loaded ahead by
//!   the asset server, mounted within a radius, dropped past a band, each
//!   reloaded in place when its archive changes on disk), with an f64
//!   origin for Bevy's zero; [`KilnTileEvent`] messages say what came and
//!   went.
//! - **Bodies.** An entity with a [`KilnBody`] and a `Transform` is a body
//!   of the world, kept at its `GlobalTransform` every frame; spawning and
//!   despawning it inserts and removes it.
//! - **Queries.** The [`KilnQuery`] system parameter asks the world's
//!   questions — rays, overlaps, yes/no tests, casts, points — with a
//!   [`KilnFilter`] by layer, entity and trigger, and names what it met by
//!   entity.
//! - **Casters.** A [`KilnRayCaster`] or [`KilnShapeCaster`] on an entity
//!   asks from where the entity is every frame, keeping the answer in a
//!   [`KilnRayCasterHit`] or [`KilnShapeCasterHit`] beside it (as avian's
//!   casters do).
//! - **Triggers.** Bodies entering and leaving trigger volumes arrive as
//!   [`KilnTriggerEvent`] messages; a trigger's [`KilnTriggerContacts`]
//!   holds who is inside it now.
//! - **Characters.** A [`KilnCharacter`] is moved by `move_and_slide` in
//!   `FixedUpdate`, riding what moves under it.
//! - **Gizmos** (feature `gizmos`): collider wireframes coloured by kind,
//!   as `baker view` colours them (`KilnGizmos`).
//! - **Avian** (feature `avian`): `KilnAvianPlugin` gives avian3d 0.7 every
//!   object's own collider from the archive — static, kinematic or dynamic
//!   bodies, sensors, layers — so a game with physics builds no second
//!   collider set.
//!
//! The world is brought up to date once a frame in `PostUpdate`, after
//! transforms propagate ([`KilnSystems::Sync`]): bodies moved in `Update`
//! are where they were moved to for queries from the next frame on.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use kiln_bevy::{KilnFilter, KilnLevel, KilnPlugin, KilnQuery};
//!
//! fn main() {
//!     App::new()
//!         .add_plugins((DefaultPlugins, KilnPlugin))
//!         .add_systems(Startup, |mut commands: Commands, assets: Res<AssetServer>| {
//!             commands.spawn(KilnLevel(assets.load("walk_course.kiln")));
//!         })
//!         .add_systems(Update, |kiln: KilnQuery| {
//!             let down = (Vec3::new(12.0, 10.0, 5.0), Dir3::NEG_Y, 100.0);
//!             if let Some(hit) = kiln.raycast(down.0, down.1, down.2, &KilnFilter::default()) {
//!                 println!("ground at {} on {}", hit.point, kiln.name(hit.object).unwrap_or_default());
//!             }
//!         })
//!         .run();
//! }
//! ```

mod asset;
#[cfg(feature = "avian")]
mod avian;
#[cfg(feature = "bake")]
mod bake;
mod body;
mod casters;
mod character;
mod convert;
#[cfg(feature = "gizmos")]
mod gizmos;
mod query;
mod tiles;
mod world;

pub use asset::{KilnArchive, KilnArchiveLoader, KilnLoadError};
#[cfg(feature = "avian")]
pub use avian::{KilnAvianPlugin, KilnStaticCollider};
#[cfg(feature = "avian")]
pub use avian3d;
#[cfg(feature = "bake")]
pub use bake::{KilnBake, KilnBakeError, KilnBakeSettings, MeshTree};
pub use body::{KilnBody, KilnBodyCollider, KilnBodyRejected, KilnShape};
pub use casters::{
    KilnRayCaster, KilnRayCasterHit, KilnShapeCaster, KilnShapeCasterHit, KilnTriggerContacts,
};
pub use character::{KilnCharacter, KilnContact};
#[cfg(feature = "gizmos")]
pub use gizmos::{KilnGizmos, kind_colour};
pub use kiln_runtime;
pub use query::{KilnCastHit, KilnFilter, KilnOverlap, KilnQuery, KilnRayHit};
pub use tiles::{
    KilnFocus, KilnTileChange, KilnTileEvent, KilnTiles, KilnWorldManifest, KilnWorldManifestLoader,
};
pub use world::{
    KilnAuthoredBody, KilnLevel, KilnLevelFailed, KilnMover, KilnSystems, KilnTrigger,
    KilnTriggerEvent, KilnWorld,
};

use bevy::app::{App, FixedUpdate, Plugin, PostUpdate};
use bevy::asset::AssetApp;
use bevy::ecs::schedule::IntoScheduleConfigs;
use bevy::transform::TransformSystems;

/// Adds Kiln: the archive asset and its loader, the bake processor
/// (feature `bake`), the [`KilnWorld`] and the systems that keep it in
/// step with the ECS, characters in `FixedUpdate`, and collider gizmos
/// (feature `gizmos`). Needs Bevy's `AssetPlugin` and `TransformPlugin`
/// (both in `DefaultPlugins`; gizmos also need its `GizmoPlugin`).
#[derive(Default)]
pub struct KilnPlugin;

impl Plugin for KilnPlugin {
    fn build(&self, app: &mut App) {
        app.init_asset::<KilnArchive>()
            .register_asset_loader(KilnArchiveLoader)
            .init_asset::<KilnWorldManifest>()
            .register_asset_loader(KilnWorldManifestLoader)
            .add_message::<KilnTileEvent>()
            .init_resource::<KilnWorld>()
            .add_message::<KilnTriggerEvent>()
            .add_message::<KilnLevelFailed>()
            .add_message::<KilnBodyRejected>()
            .init_resource::<body::Pending>()
            .configure_sets(
                PostUpdate,
                KilnSystems::Sync.after(TransformSystems::Propagate),
            )
            .add_systems(
                PostUpdate,
                (
                    world::sync_level,
                    tiles::sync_tiles,
                    world::sync_movers,
                    body::sync_bodies,
                    world::step,
                    casters::cast,
                )
                    .chain()
                    .in_set(KilnSystems::Sync),
            )
            .add_systems(
                FixedUpdate,
                character::move_characters.in_set(KilnSystems::Characters),
            );
        #[cfg(feature = "bake")]
        bake::register(app);
        #[cfg(feature = "gizmos")]
        gizmos::register(app);
    }

    /// Refuses an app without `TransformPlugin` (`MinimalPlugins` lacks
    /// it): bodies, movers and triggers follow `GlobalTransform`, which
    /// would never move, and nothing would say why.
    fn finish(&self, app: &mut App) {
        assert!(
            app.is_plugin_added::<bevy::transform::TransformPlugin>(),
            "KilnPlugin needs Bevy's TransformPlugin: bodies, movers and triggers follow \
             GlobalTransform, which only it updates. DefaultPlugins has it; with \
             MinimalPlugins, add TransformPlugin (and AssetPlugin)."
        );
    }
}
