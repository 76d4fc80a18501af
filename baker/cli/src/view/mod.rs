//! `baker view`: a local web page over one archive and, optionally, the
//! glTF level it was baked from. The server listens on 127.0.0.1 only and
//! serves a fixed set of paths: the page and its scripts (compiled into the
//! binary, three.js included), and a small API over the archive:
//!
//! | path | answer |
//! |---|---|
//! | `GET /api/level` | objects (name, kind, rule, layers, triangles, bytes, bounds) and where their geometry is |
//! | `GET /api/geometry` | world-space colliders and render meshes (f32 positions, u32 indices) |
//! | `GET /api/version` | the generation shown and the last reload error |
//! | `POST /api/query` | one `baker query` request (JSON) answered by the same code |
//! | `GET /api/fidelity?object=I` | how far each collider triangle strays from its render mesh (`faces`; null, with a `reason`, when there is none) |
//!
//! Nothing else is read from disk. A watcher thread checks the archive
//! every 100 ms; when it is replaced it is opened again and the page,
//! polling `/api/version`, redraws within a second, keeping its camera. An
//! archive that fails to open leaves the last good level served and its
//! error shown in a banner.

mod snapshot;

pub use snapshot::Snapshot;

pub mod http;

use http::Answer;
use kiln_runtime::{Level, LevelHandle};
use serde_json::json;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};
use thiserror::Error;

pub use http::{MAX_BODY, MAX_HEAD, MAX_URL};

/// Why the viewer could not start.
#[derive(Debug, Error)]
pub enum ViewError {
    /// The archive could not be opened (the error names the file).
    #[error(transparent)]
    Archive(#[from] kiln_runtime::OpenError),
    /// The source level could not be read.
    #[error(transparent)]
    Source(#[from] kiln_baker::IngestError),
    /// The port could not be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {reason}")]
    Listen {
        /// The port asked for.
        port: u16,
        /// Why.
        reason: String,
    },
}

/// What `baker view` serves.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The archive.
    pub archive: PathBuf,
    /// The glTF level it was baked from, for the render meshes.
    pub source: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
}

/// State shared by the request threads and the watcher.
struct Shared {
    opts: ViewOptions,
    /// The archive, re-opened by the watcher (the runtime's hot reload).
    handle: LevelHandle,
    snapshot: RwLock<Arc<Snapshot>>,
    /// The last reload's error (cleared by a good reload).
    error: Mutex<Option<String>>,
}

/// A running viewer server.
pub struct Viewer {
    listener: TcpListener,
    shared: Arc<Shared>,
    addr: SocketAddr,
}

/// The archive's and the source's stamps as they were before the viewer
/// first read them.
struct Stamps {
    archive: Option<(SystemTime, u64)>,
    source: Option<(SystemTime, u64)>,
}

/// The file's identity as the watcher compares it: a rename or a rewrite
/// changes the modification time or the length.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

fn load_source(path: &Path) -> Result<kiln_baker::Scene, kiln_baker::IngestError> {
    Ok(kiln_baker::ingest::load(path)?.scene)
}

/// Describes `level` for the page, with the render meshes of `source`.
fn snapshot(
    opts: &ViewOptions,
    generation: u64,
    level: Arc<Level>,
    source: Option<&kiln_baker::Scene>,
) -> Snapshot {
    let name = |p: &Path| p.display().to_string();
    let src = opts.source.as_deref().map(name);
    Snapshot::new(
        generation,
        level,
        &name(&opts.archive),
        src.as_deref().zip(source),
    )
}

impl Viewer {
    /// Opens the archive (and reads the source), binds 127.0.0.1:`port`
    /// and starts the watcher; [`Viewer::serve`] answers requests.
    pub fn start(opts: ViewOptions) -> Result<Viewer, ViewError> {
        // stamp before reading, so a save that lands between the read and
        // the watcher's start is still seen as a change
        let stamps = Stamps {
            archive: stamp(&opts.archive),
            source: opts.source.as_deref().and_then(stamp),
        };
        let source = opts.source.as_deref().map(load_source).transpose()?;
        let handle = LevelHandle::open(&opts.archive)?;
        let first = snapshot(&opts, 1, handle.level(), source.as_ref());
        let listen_err = |e: std::io::Error| ViewError::Listen {
            port: opts.port,
            reason: e.to_string(),
        };
        // loopback only: never another interface
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, opts.port)))
            .map_err(listen_err)?;
        let addr = listener.local_addr().map_err(listen_err)?;
        let shared = Arc::new(Shared {
            opts,
            handle,
            snapshot: RwLock::new(Arc::new(first)),
            error: Mutex::new(None),
        });
        let watched = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("kiln-view-watch".into())
            .spawn(move || watch(&watched, source, stamps))
            .expect("spawn the watcher thread");
        Ok(Viewer {
            listener,
            shared,
            addr,
        })
    }

    /// The address it listens on (always 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Answers requests, each connection on its own thread (at most
    /// `threads` at once; more wait to be accepted), until the process
    /// ends.
    pub fn serve(&self, threads: usize) {
        let shared = &self.shared;
        http::serve(&self.listener, threads.max(1), |method, target, body| {
            route(shared, method, target, body)
        });
    }

    /// Serves on background threads (for `--screenshot` and tests); the
    /// server stops with the process.
    pub fn serve_in_background(self, threads: usize) -> String {
        let url = self.url();
        std::thread::spawn(move || self.serve(threads));
        url
    }
}

/// Re-opens the archive whenever its modification time or length changes
/// (a `stat` every 100 ms: cheap, and it also works where file events do
/// not reach, such as network shares), through the runtime's
/// [`LevelHandle::reload`], and re-reads the source when that changed too.
/// A new level is a new generation; the same bytes again (a forced re-bake)
/// are not; a failed open keeps the last good level and records the error
/// for the page's banner.
fn watch(shared: &Shared, mut source: Option<kiln_baker::Scene>, stamps: Stamps) {
    let opts = &shared.opts;
    let set_error = |e: Option<String>| *shared.error.lock().unwrap() = e;
    let Stamps {
        archive: mut seen,
        source: mut seen_source,
    } = stamps;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = stamp(&opts.archive);
        if now == seen || now.is_none() {
            continue;
        }
        seen = now;
        if let Some(path) = opts.source.as_deref() {
            let s = stamp(path);
            if s != seen_source {
                seen_source = s;
                match load_source(path) {
                    Ok(scene) => source = Some(scene),
                    Err(e) => {
                        set_error(Some(e.to_string()));
                        continue;
                    }
                }
            }
        }
        match shared.handle.reload() {
            Ok(false) => set_error(None),
            Ok(true) => {
                let generation = shared.snapshot.read().unwrap().generation + 1;
                let s = snapshot(opts, generation, shared.handle.level(), source.as_ref());
                *shared.snapshot.write().unwrap() = Arc::new(s);
                set_error(None);
                eprintln!(
                    "view: reloaded {} (generation {generation})",
                    opts.archive.display()
                );
            }
            Err(e) => {
                eprintln!("view: {e}; still serving the last good level");
                set_error(Some(e.to_string()));
            }
        }
    }
}

const INDEX: &[u8] = include_bytes!("../../assets/view/index.html");
const APP: &[u8] = include_bytes!("../../assets/view/app.js");
const THREE: &[u8] = include_bytes!("../../assets/view/vendor/three.module.min.js");
const ORBIT: &[u8] = include_bytes!("../../assets/view/vendor/OrbitControls.js");
const THREE_LICENSE: &[u8] = include_bytes!("../../assets/view/vendor/LICENSE-three.txt");

const JS: &str = "text/javascript";

/// The fixed set of static files: path, type, bytes.
const FILES: [(&str, &str, &[u8]); 6] = [
    ("/", "text/html; charset=utf-8", INDEX),
    ("/index.html", "text/html; charset=utf-8", INDEX),
    ("/app.js", JS, APP),
    ("/vendor/three.module.min.js", JS, THREE),
    ("/vendor/OrbitControls.js", JS, ORBIT),
    (
        "/vendor/LICENSE-three.txt",
        "text/plain; charset=utf-8",
        THREE_LICENSE,
    ),
];

/// The API paths.
const API: [&str; 5] = [
    "/api/level",
    "/api/geometry",
    "/api/version",
    "/api/fidelity",
    "/api/query",
];

/// One query parameter of `query` (`a=1&b=2`), if present.
fn param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Answers one request. Every path outside the fixed set is refused, so
/// nothing but the archive and the source is ever read from disk.
fn route(shared: &Shared, method: &str, target: &str, body: &[u8]) -> Answer {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let known = FILES.iter().any(|f| f.0 == path) || API.contains(&path);
    if !known {
        return Answer::refuse(
            404,
            "not served: the viewer serves its page and /api/* only",
        );
    }
    let post = path == "/api/query";
    if method != if post { "POST" } else { "GET" } {
        return Answer::refuse(405, "method not allowed on this path");
    }
    if let Some(&(_, kind, bytes)) = FILES.iter().find(|f| f.0 == path) {
        return Answer::new(200, kind, bytes);
    }
    let snap = Arc::clone(&shared.snapshot.read().unwrap());
    match path {
        "/api/level" => Answer::new(200, "application/json", snap.level_json.clone()),
        // the page asks for the generation it was just told about
        "/api/geometry" => match param(query, "generation").map(str::parse::<u64>) {
            Some(Ok(g)) if g != snap.generation => {
                Answer::refuse(409, "the archive was reloaded: ask /api/level again")
            }
            Some(Err(_)) => Answer::refuse(400, "generation must be a whole number"),
            _ => Answer::new(200, "application/octet-stream", snap.geometry.clone()),
        },
        "/api/version" => {
            let error = shared.error.lock().unwrap().clone();
            Answer::json(200, &json!({"generation": snap.generation, "error": error}))
        }
        "/api/fidelity" => {
            let Some(i) = param(query, "object").and_then(|v| v.parse::<usize>().ok()) else {
                return Answer::refuse(400, "object must be an object index");
            };
            if i >= snap.colliders.len() {
                return Answer::refuse(404, "no such object");
            }
            // no heat map to give is an answer, not an error: `faces` null
            // and the reason
            let none =
                |why: &str| Answer::json(200, &json!({"object": i, "faces": null, "reason": why}));
            match snap.heat_map(i) {
                None if snap.render.is_empty() => none("no source given (--source)"),
                None => none("no render mesh of that name in the source"),
                Some(Err(e)) => none(&e),
                Some(Ok(d)) => {
                    let max = d.iter().copied().fold(0.0, f64::max);
                    let mean = d.iter().sum::<f64>() / d.len().max(1) as f64;
                    Answer::json(
                        200,
                        &json!({"object": i, "faces": *d, "max": max, "mean": mean}),
                    )
                }
            }
        }
        _ => {
            let Ok(line) = std::str::from_utf8(body) else {
                return Answer::refuse(400, "request body is not UTF-8");
            };
            let line = line.trim();
            if line.contains('\n') {
                return Answer::refuse(400, "one query per request");
            }
            let answer = crate::json_lines::answer_line(&snap.world, line);
            let status = if answer.get("error").is_some() {
                400
            } else {
                200
            };
            Answer::json(status, &answer)
        }
    }
}

/// Finds a Chromium to render `--screenshot` with: `$KILN_CHROMIUM`, then
/// `chromium`, `chromium-browser`, `google-chrome` on the PATH.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KILN_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
    .find(|p| p.is_file())
}

/// The arguments that make `chromium` render a WebGL page headless with
/// software GL (no GPU needed) and nothing shared with a user profile.
pub fn headless_args(profile: &Path, width: u32, height: u32) -> Vec<String> {
    vec![
        "--headless=new".into(),
        "--no-sandbox".into(),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        "--disable-extensions".into(),
        "--use-angle=swiftshader".into(),
        "--enable-unsafe-swiftshader".into(),
        "--hide-scrollbars".into(),
        format!("--user-data-dir={}", profile.display()),
        format!("--window-size={width},{height}"),
    ]
}
