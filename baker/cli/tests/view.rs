//! `baker view` end to end: the real binary serving a baked sample, its
//! HTTP API checked against the runtime's own answers, hostile requests,
//! the loopback-only listener, live reload, and the page itself in a real
//! headless Chromium (Debian's `chromium`, installed by `.ci/run`): no
//! script errors, a click at a known pixel reporting the object there,
//! collider colours in a screenshot, and a re-bake reaching the page.
//!
//! Without Chromium the browser tests print a loud SKIPPED line and pass;
//! everything else always runs.

use kiln_runtime::{Filter, Level, Ray, Vec3};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{baker, sample};

fn tmpdir(tag: &str) -> PathBuf {
    common::tmpdir("view", tag)
}

/// The bundled walk course baked into a fresh directory for test `tag`.
fn walk_course(tag: &str) -> PathBuf {
    let archive = tmpdir(tag).join("walk.kiln");
    bake(&sample("walk_course.gltf"), &archive);
    archive
}

/// Bakes `input` to `out` with the real binary.
fn bake(input: &Path, out: &Path) {
    let s = baker()
        .args([
            "bake",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--force",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(s.success(), "bake {}", input.display());
}

/// Replaces `archive` the way the baker does (write beside, rename over).
fn replace(archive: &Path, bytes: &[u8]) {
    let tmp = archive.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, archive).unwrap();
}

/// A running `baker view` (killed on drop).
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `baker view` on a free port and reads the address it prints.
fn serve(archive: &Path, source: Option<&Path>) -> Server {
    let mut cmd = baker();
    cmd.args(["view", archive.to_str().unwrap(), "--port", "0"]);
    if let Some(s) = source {
        cmd.args(["--source", s.to_str().unwrap()]);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    Server { child, addr }
}

/// One raw request; the status and body of the answer (`None` when the
/// server closed the connection without one).
fn raw(addr: SocketAddr, request: &[u8]) -> Option<(u16, Vec<u8>)> {
    raw_with(addr, request, false)
}

/// [`raw`], closing the sending half after the request when `done` (a
/// hostile request may be incomplete: the server then answers at once
/// instead of at its 10 s limit).
fn raw_with(addr: SocketAddr, request: &[u8], done: bool) -> Option<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap_or_else(|e| {
        panic!(
            "connect to {addr}: {e} (request {:?})",
            String::from_utf8_lossy(&request[..request.len().min(80)])
        )
    });
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // the server may close before reading everything we meant to send
    let _ = s.write_all(request);
    if done {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let at = out.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    Some((status, out[at..].to_vec()))
}

fn get(addr: SocketAddr, path: &str) -> (u16, Vec<u8>) {
    raw(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap()
}

fn get_json(addr: SocketAddr, path: &str) -> (u16, Value) {
    let (s, b) = get(addr, path);
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

fn post(addr: SocketAddr, path: &str, body: &[u8]) -> (u16, Value) {
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    let (s, b) = raw(addr, &req).unwrap();
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

/// Waits up to `limit` for `f` to hold.
fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

#[test]
fn the_level_api_describes_every_object_and_its_geometry() {
    let archive = walk_course("level");
    let level = Level::open(&archive).unwrap();
    let server = serve(&archive, Some(&sample("walk_course.gltf")));
    let (status, l) = get_json(server.addr, "/api/level");
    assert_eq!(status, 200);
    let objects = l["objects"].as_array().unwrap();
    assert_eq!(objects.len(), level.object_count() as usize);
    assert!(
        !l["render"].as_array().unwrap().is_empty(),
        "render meshes from --source"
    );
    let (status, geo) = get(server.addr, "/api/geometry");
    assert_eq!(status, 200);
    assert_eq!(geo.len() as u64, l["geometry_bytes"].as_u64().unwrap());
    for o in objects {
        let i = o["index"].as_u64().unwrap() as u32;
        assert_eq!(
            o["name"],
            *level
                .object_name(level.object(i).unwrap())
                .unwrap_or_default()
        );
        assert!(
            ["cuboid", "sphere", "capsule", "polytope", "bsp", "trimesh"]
                .contains(&o["kind"].as_str().unwrap())
        );
        assert!(o["bytes"].as_u64().unwrap() > 0);
        // every collider vertex lies inside the object's bounds
        let g = &o["geometry"];
        let (at, n) = (
            g["positions"].as_u64().unwrap() as usize,
            g["vertices"].as_u64().unwrap() as usize,
        );
        let (lo, hi) = (&o["bounds"][0], &o["bounds"][1]);
        for v in 0..n {
            for k in 0..3 {
                let b = at + (v * 3 + k) * 4;
                let x = f32::from_le_bytes(geo[b..b + 4].try_into().unwrap()) as f64;
                assert!(x >= lo[k].as_f64().unwrap() - 1e-3 && x <= hi[k].as_f64().unwrap() + 1e-3);
            }
        }
        let tris = g["triangles"].as_u64().unwrap() as usize;
        let idx = g["indices"].as_u64().unwrap() as usize;
        for t in 0..tris * 3 {
            let b = idx + t * 4;
            assert!((u32::from_le_bytes(geo[b..b + 4].try_into().unwrap()) as usize) < n);
        }
    }
    // a stale generation is refused, so the page never mixes two archives
    let (status, _) = get(server.addr, "/api/geometry?generation=999");
    assert_eq!(status, 409);
    // the heat map: how far each collider triangle strays from its render
    // mesh (the walk course's colliders are its render boxes and planes)
    let floor = objects.iter().position(|o| o["kind"] == "trimesh").unwrap();
    let (status, f) = get_json(server.addr, &format!("/api/fidelity?object={floor}"));
    assert_eq!(status, 200, "{f}");
    let faces = f["faces"].as_array().unwrap();
    assert_eq!(
        faces.len() as u64,
        objects[floor]["geometry"]["triangles"].as_u64().unwrap()
    );
    assert!(f["max"].as_f64().unwrap() < 1e-4, "{}", f["max"]);
    assert_eq!(get_json(server.addr, "/api/fidelity?object=999").0, 404);
    // an object with no render mesh of its name: no heat map, and why
    let other = tmpdir("level-other-source").join("shapes.kiln");
    bake(&sample("shape_collection.glb"), &other);
    let mismatched = serve(&other, Some(&sample("walk_course.gltf")));
    let (status, l2) = get_json(mismatched.addr, "/api/fidelity?object=0");
    assert_eq!(status, 200);
    assert!(l2["faces"].is_null() && l2["reason"].is_string(), "{l2}");
    assert_eq!(get_json(server.addr, "/api/fidelity?object=x").0, 400);
}

/// The props sample's dynamic concave props come with their convex pieces
/// (the L crate 2, the U tray 3, the box none), each piece's corners
/// inside the object's bounds, for the page to draw in their own colours.
#[test]
fn the_level_api_carries_each_object_s_convex_pieces() {
    let archive = tmpdir("pieces").join("props.kiln");
    bake(&sample("props.gltf"), &archive);
    let server = serve(&archive, None);
    let (status, l) = get_json(server.addr, "/api/level");
    assert_eq!(status, 200);
    let (_, geo) = get(server.addr, "/api/geometry");
    let mut counts = std::collections::BTreeMap::new();
    for o in l["objects"].as_array().unwrap() {
        let pieces = o["pieces"].as_array().unwrap();
        counts.insert(o["name"].as_str().unwrap().to_string(), pieces.len());
        let (lo, hi) = (&o["bounds"][0], &o["bounds"][1]);
        for g in pieces {
            let at = g["positions"].as_u64().unwrap() as usize;
            assert!(g["triangles"].as_u64().unwrap() >= 4);
            for v in 0..g["vertices"].as_u64().unwrap() as usize {
                for k in 0..3 {
                    let b = at + (v * 3 + k) * 4;
                    let x = f32::from_le_bytes(geo[b..b + 4].try_into().unwrap()) as f64;
                    assert!(
                        x >= lo[k].as_f64().unwrap() - 1e-3 && x <= hi[k].as_f64().unwrap() + 1e-3
                    );
                }
            }
        }
    }
    let expected: std::collections::BTreeMap<String, usize> = [
        ("box", 0),
        ("crate", 0),
        ("floor", 0),
        ("l_crate", 2),
        ("table", 0),
        ("tub", 0),
        ("u_tray", 3),
    ]
    .into_iter()
    .map(|(n, c)| (n.to_string(), c))
    .collect();
    assert_eq!(counts, expected);
}

/// The heat map measures something: a simplified torus strays from its
/// render mesh, by about what the baker reported.
#[test]
fn the_heat_map_shows_how_far_a_simplified_collider_strays() {
    let dir = tmpdir("heat");
    let archive = dir.join("shapes.kiln");
    bake(&sample("shape_collection.glb"), &archive);
    let server = serve(&archive, Some(&sample("shape_collection.glb")));
    let (_, l) = get_json(server.addr, "/api/level");
    let torus = l["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "Torus")
        .unwrap();
    let (status, f) = get_json(
        server.addr,
        &format!("/api/fidelity?object={}", torus["index"]),
    );
    assert_eq!(status, 200, "{f}");
    let max = f["max"].as_f64().unwrap();
    // the baker's report: Hausdorff 0.0373 m, collider -> render 0.0372 m
    assert!(max > 0.005 && max < 0.05, "{max}");
    assert!(f["mean"].as_f64().unwrap() < max);
}

#[test]
fn the_query_endpoint_answers_as_the_runtime_does() {
    let archive = walk_course("query");
    let level = Level::open(&archive).unwrap();
    let server = serve(&archive, None);
    let mut rng = kiln_tests::Rng::new(7);
    let mut rnd = || rng.f32();
    let mut hits = 0;
    for _ in 0..300 {
        let o = Vec3::new(rnd() * 24.0 - 2.0, rnd() * 8.0, rnd() * 24.0 - 2.0);
        let d = Vec3::new(rnd() - 0.5, rnd() - 0.7, rnd() - 0.5);
        let q = json!({"ray": {"origin": o.to_array(), "dir": d.to_array(), "max_t": 50.0}});
        let (status, a) = post(server.addr, "/api/query", q.to_string().as_bytes());
        assert_eq!(status, 200, "{a}");
        match level.raycast(&Ray::new(o, d, 50.0), &Filter::ALL) {
            None => assert!(a["hit"].is_null(), "{q} -> {a}"),
            Some(h) => {
                hits += 1;
                assert_eq!(a["hit"]["t"].as_f64().unwrap() as f32, h.t, "{q}");
                assert_eq!(
                    a["hit"]["object"],
                    *level.object_name(h.object).unwrap_or_default(),
                    "{q}"
                );
                assert_eq!(a["hit"]["object_index"], h.object.index(), "{q}");
                assert_eq!(a["hit"]["feature"], json!(h.feature), "{q}");
            }
        }
    }
    assert!(hits > 100, "{hits} of 300 rays hit");
    // sphere probes: the same overlaps as the runtime's
    for k in 0..50 {
        let c = Vec3::new(rnd() * 20.0, rnd() * 2.0, rnd() * 20.0);
        let q = json!({"sphere": {"center": c.to_array(), "radius": 0.5 + k as f32 * 0.02}});
        let (status, a) = post(server.addr, "/api/query", q.to_string().as_bytes());
        assert_eq!(status, 200);
        let mut want = Vec::new();
        level.overlap_into(
            &kiln_runtime::QueryShape::Sphere {
                radius: 0.5 + k as f32 * 0.02,
            },
            &kiln_runtime::Pose::at(c),
            &Filter::ALL,
            &mut want,
        );
        assert_eq!(a["overlaps"].as_array().unwrap().len(), want.len(), "{q}");
    }
    // a malformed query is a 400 with the reason, as `baker query` words it
    let (status, a) = post(
        server.addr,
        "/api/query",
        br#"{"ray":{"origin":[0,1],"dir":[0,-1,0]}}"#,
    );
    assert_eq!(status, 400);
    assert!(a["error"].as_str().unwrap().contains("origin"), "{a}");
}

#[test]
fn hostile_requests_get_4xx_and_the_server_keeps_serving() {
    let archive = walk_course("hostile");
    let server = serve(&archive, None);
    let a = server.addr;
    // paths outside what it serves
    for p in [
        "/etc/passwd",
        "/../Cargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/api/../../walk.kiln",
        "/vendor/../../Cargo.toml",
        "/api/levelx",
    ] {
        assert_eq!(get(a, p).0, 404, "{p}");
    }
    assert_eq!(post(a, "/api/level", b"{}").0, 405);
    assert_eq!(get(a, "/api/query").0, 405);
    // oversized body and URL
    let big = vec![b' '; 70 * 1024];
    assert_eq!(post(a, "/api/query", &big).0, 413);
    assert_eq!(get(a, &format!("/{}", "a".repeat(5000))).0, 414);
    let lie = b"POST /api/query HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 99999999999\r\n\r\n{}";
    if let Some((s, _)) = raw_with(a, lie, true) {
        assert!((400..500).contains(&s), "{s}");
    }
    // 10,000 hostile requests: garbage bytes, broken request lines and
    // headers, bad JSON, huge numbers, wrong shapes
    let mut rng = kiln_tests::Rng::new(11);
    let mut rnd = || rng.below(1 << 24) as u32;
    let bodies: [&[u8]; 8] = [
        b"{",
        b"null",
        b"{\"ray\":{\"origin\":[1e39,0,0],\"dir\":[0,-1,0]}}",
        b"{\"ray\":{\"origin\":[0,0,0],\"dir\":[0,0,0]}}",
        b"{\"hull\":{\"points\":[]}}",
        b"{\"sphere\":{\"center\":[0,0,0],\"radius\":-1}}",
        b"\xff\xfe\x00",
        b"{\"box\":{\"center\":[0,0,0],\"half\":[1,1,1],\"rotation\":[0,0,0,0]}}",
    ];
    let mut answered = 0;
    for i in 0..10_000 {
        let r = rnd();
        let req: Vec<u8> = match i % 4 {
            0 => (0..(r % 300)).map(|_| rnd() as u8).collect(),
            1 => {
                let b = bodies[(r % 8) as usize];
                let mut q = format!("POST /api/query HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n", b.len()).into_bytes();
                q.extend_from_slice(b);
                q
            }
            2 => format!(
                "GET /api/fidelity?object={} HTTP/1.1\r\nConnection: close\r\n\r\n",
                r as i32
            )
            .into_bytes(),
            _ => format!(
                "{} /{} HTTP/9.9\r\nX: {}\r\n\r\n",
                ["GET", "PUT", "DELETE", "\u{1}"][(r % 4) as usize],
                r,
                "y".repeat((r % 9000) as usize)
            )
            .into_bytes(),
        };
        if let Some((status, _)) = raw_with(a, &req, true) {
            assert!((400..500).contains(&status), "request {i}: {status}");
            answered += 1;
        }
    }
    // only a request that sent nothing goes unanswered
    assert!(answered > 9_900, "{answered} of 10,000 answered");
    let (status, v) = get_json(a, "/api/version");
    assert_eq!(status, 200);
    assert_eq!(v["generation"], 1);
}

/// This machine's first non-loopback IPv4 address, if it has one (a UDP
/// "connect" sends nothing; it only picks the outgoing interface).
fn non_loopback() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("10.255.255.255:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn the_server_is_not_reachable_on_other_interfaces() {
    let archive = walk_course("loopback");
    let server = serve(&archive, None);
    assert!(server.addr.ip().is_loopback());
    assert_eq!(get(server.addr, "/api/version").0, 200);
    match non_loopback() {
        None => eprintln!("*** SKIPPED: this machine has no non-loopback address to try ***"),
        Some(ip) => {
            let other = SocketAddr::new(ip, server.addr.port());
            assert!(
                TcpStream::connect_timeout(&other, Duration::from_secs(2)).is_err(),
                "reachable on {other}"
            );
        }
    }
}

#[test]
fn a_rebake_reaches_the_api_and_a_broken_archive_keeps_the_last_good_level() {
    let dir = tmpdir("reload");
    let archive = dir.join("level.kiln");
    let (walk, shapes) = (dir.join("walk.kiln"), dir.join("shapes.kiln"));
    bake(&sample("walk_course.gltf"), &walk);
    bake(&sample("shape_collection.glb"), &shapes);
    std::fs::copy(&walk, &archive).unwrap();
    let server = serve(&archive, None);
    let a = server.addr;
    let count = || {
        get_json(a, "/api/level").1["objects"]
            .as_array()
            .unwrap()
            .len()
    };
    let walk_objects = count();
    replace(&archive, &std::fs::read(&shapes).unwrap());
    let t0 = Instant::now();
    // the watcher polls every 100 ms; the slack is for a loaded machine
    assert!(eventually(Duration::from_secs(5), || get_json(
        a,
        "/api/version"
    )
    .1["generation"]
        == 2));
    eprintln!("reload reached the API in {:?}", t0.elapsed());
    let shape_objects = Level::open(&shapes).unwrap().object_count() as usize;
    assert_ne!(walk_objects, shape_objects);
    assert_eq!(count(), shape_objects);
    // a truncated archive: an error to show, the last good level served
    let good = std::fs::read(&walk).unwrap();
    replace(&archive, &good[..good.len() / 2]);
    assert!(eventually(Duration::from_secs(2), || !get_json(
        a,
        "/api/version"
    )
    .1["error"]
        .is_null()));
    let v = get_json(a, "/api/version").1;
    assert_eq!(v["generation"], 2);
    assert!(v["error"].as_str().unwrap().contains("level.kiln"), "{v}");
    assert_eq!(count(), shape_objects);
    let (status, _) = post(
        a,
        "/api/query",
        br#"{"ray":{"origin":[0,10,0],"dir":[0,-1,0]}}"#,
    );
    assert_eq!(status, 200);
    // and a good one again clears it
    replace(&archive, &good);
    assert!(eventually(Duration::from_secs(2), || get_json(
        a,
        "/api/version"
    )
    .1["generation"]
        == 3));
    assert!(get_json(a, "/api/version").1["error"].is_null());
}

// ---------------------------------------------------------------------
// The page in a real headless Chromium, driven over the Chrome DevTools
// protocol (a websocket to the page; `Runtime.evaluate` reads the page,
// `Input.dispatchMouseEvent` clicks, `Page.captureScreenshot` looks).

/// Starts the command in a process group of its own.
fn in_own_group(cmd: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
}

/// Kills `child` and every process in its group.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// The Chromium the viewer would use, or a loud skip.
fn chromium() -> Option<PathBuf> {
    let found = baker_tools::view::find_chromium();
    if found.is_none() {
        eprintln!(
            "*** SKIPPED: no Chromium (install Debian's `chromium`, as .ci/run does, or set KILN_CHROMIUM): the browser tests did not run ***"
        );
    }
    found
}

/// A headless Chromium showing one page, with a DevTools connection to it.
struct Browser {
    child: Child,
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next: u64,
    /// `Log.entryAdded` and `Runtime.exceptionThrown` events seen.
    events: Vec<Value>,
    profile: PathBuf,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Debian's `chromium` is a script that starts the browser, whose
        // helper processes (GPU, renderer) outlive a kill of the script:
        // the whole process group goes, or a software-GL page would go on
        // rendering at 100% of a core after the test
        kill_group(&mut self.child);
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Browser {
    /// Opens `url` in a fresh headless Chromium (1280×800).
    fn open(chromium: &Path, url: &str, tag: &str) -> Browser {
        let profile = tmpdir(&format!("chromium-{tag}"));
        let mut cmd = Command::new(chromium);
        in_own_group(&mut cmd);
        let mut child = cmd
            .args(baker_tools::view::headless_args(&profile, 1280, 800))
            .arg("--remote-debugging-port=0")
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID"
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut port = None;
        let mut line = String::new();
        while port.is_none() && err.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(at) = line.find("ws://127.0.0.1:") {
                let rest = &line[at + "ws://127.0.0.1:".len()..];
                port = rest.split('/').next().and_then(|p| p.parse::<u16>().ok());
            }
            line.clear();
        }
        // keep draining Chromium's stderr so it never blocks on a full pipe
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        let port = port.expect("Chromium printed its DevTools address");
        let devtools = SocketAddr::from(([127, 0, 0, 1], port));
        let mut page = None;
        assert!(eventually(Duration::from_secs(10), || {
            let (_, list) = get_json(devtools, "/json/list");
            page = list.as_array().and_then(|l| {
                l.iter()
                    .find(|t| t["type"] == "page")
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(String::from))
            });
            page.is_some()
        }));
        let (ws, _) = tungstenite::connect(page.unwrap()).unwrap();
        let mut b = Browser {
            child,
            ws,
            next: 1,
            events: Vec::new(),
            profile,
        };
        b.call("Log.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        // the page's viewport exactly 1280×800 (the window's is smaller)
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    /// Sends one DevTools command and waits for its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let msg = json!({"id": id, "method": method, "params": params});
        self.ws
            .send(tungstenite::Message::Text(msg.to_string()))
            .unwrap();
        loop {
            let m = self.ws.read().unwrap();
            let Ok(text) = m.to_text() else { continue };
            let Ok(v) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            if v["method"] == "Log.entryAdded" || v["method"] == "Runtime.exceptionThrown" {
                self.events.push(v);
            }
        }
    }

    /// Evaluates `expr` in the page (awaiting a promise) and returns its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Waits up to `limit` for `expr` to be true in the page.
    fn wait_for(&mut self, expr: &str, limit: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            if self.eval(expr) == json!(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        false
    }

    /// A real mouse click (press and release) at page pixel (x, y).
    fn click(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1}),
            );
        }
    }

    /// The page as a PNG: (width, height, RGBA pixels).
    fn screenshot(&mut self) -> (u32, u32, Vec<u8>) {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        decode_png(&png)
    }

    /// Error-level console entries and uncaught exceptions seen so far.
    fn errors(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| {
                e["method"] == "Runtime.exceptionThrown" || e["params"]["entry"]["level"] == "error"
            })
            .collect()
    }
}

fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut d = png::Decoder::new(bytes);
    d.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut r = d.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// RGB of pixel (x, y) of an RGBA image `w` wide.
fn pixel(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let at = ((y * img.0 + x) * 4) as usize;
    [img.2[at], img.2[at + 1], img.2[at + 2]]
}

/// Teal-ish: the triangle-mesh colour (0x19d3c5) lit and blended over
/// the grey render mesh, far from the grey and the dark background.
fn is_trimesh_colour([r, g, b]: [u8; 3]) -> bool {
    g as i32 > r as i32 + 40 && b as i32 > r as i32 + 40
}

/// The camera the browser tests look through: above floor_1, down at
/// (12, 0, 5), so the view's centre pixel sees that floor.
const CAMERA: &str = "12,30,5.5,12,0,5";

/// The view is the page left of the 320-pixel side panel.
const CENTRE: (f64, f64) = ((1280.0 - 320.0) / 2.0, 400.0);

#[test]
fn the_page_runs_in_chromium_clicks_hit_the_object_under_the_cursor_and_reloads_live() {
    let Some(chromium) = chromium() else { return };
    let dir = tmpdir("browser");
    let archive = dir.join("level.kiln");
    let shapes = dir.join("shapes.kiln");
    bake(&sample("walk_course.gltf"), &archive);
    bake(&sample("shape_collection.glb"), &shapes);
    let level = Level::open(&archive).unwrap();
    let server = serve(&archive, Some(&sample("walk_course.gltf")));
    let url = format!("http://{}/?camera={CAMERA}", server.addr);
    let mut b = Browser::open(&chromium, &url, "page");
    assert!(
        b.wait_for(
            "document.body.dataset.state === 'ready'",
            Duration::from_secs(30)
        ),
        "the page never became ready: {}",
        b.eval("document.body.dataset.state + ' ' + document.getElementById('errors').textContent")
    );
    assert_eq!(
        b.eval("document.getElementById('errors').textContent"),
        json!("")
    );
    assert_eq!(
        b.eval("+document.body.dataset.objects"),
        json!(level.object_count())
    );

    // a click at the view's centre casts the ray the runtime answers
    let eye = Vec3::new(12.0, 30.0, 5.5);
    let want = level
        .raycast(
            &Ray::new(eye, Vec3::new(12.0, 0.0, 5.0) - eye, 10.0),
            &Filter::ALL,
        )
        .expect("the centre ray hits the floor");
    b.click(CENTRE.0, CENTRE.1);
    assert!(b.wait_for(
        "!!document.getElementById('hit').dataset.object",
        Duration::from_secs(10)
    ));
    assert_eq!(
        b.eval("document.getElementById('hit').dataset.object"),
        json!(level.object_name(want.object).unwrap_or_default())
    );

    // a sphere dropped on the floor there touches it, and the page lists
    // the contact the runtime reports
    b.eval("document.querySelector('input[name=mode][value=sphere]').click()");
    b.eval("document.getElementById('hit').dataset.object = ''");
    b.click(CENTRE.0, CENTRE.1);
    assert!(b.wait_for(
        "document.getElementById('hit').textContent.includes('overlap(s)')",
        Duration::from_secs(10)
    ));
    let text = b.eval("document.getElementById('hit').textContent");
    let floor = level
        .object_name(want.object)
        .unwrap_or_default()
        .to_string();
    assert!(
        text.as_str().unwrap().contains(&format!("{floor}: depth")),
        "{text}"
    );
    b.eval("document.querySelector('input[name=mode][value=ray]').click()");
    // every object's "strays" figure filled in from the heat maps
    assert!(b.wait_for(
        "document.getElementById('objects').dataset.strays === 'done'",
        Duration::from_secs(10)
    ));

    // what the screen shows there: the triangle mesh's colour; the
    // corner beyond the level: the background
    let img = b.screenshot();
    assert_eq!((img.0, img.1), (1280, 800));
    let c = pixel(&img, CENTRE.0 as u32 + 40, CENTRE.1 as u32 + 40);
    assert!(is_trimesh_colour(c), "centre pixel {c:?}");
    assert!(!is_trimesh_colour(pixel(&img, 2, 2)));

    // a re-bake reaches the page within a second, keeping the camera
    let before = b.eval("window.kilnView.camera.position.toArray()");
    let t0 = Instant::now();
    replace(&archive, &std::fs::read(&shapes).unwrap());
    assert!(b.wait_for(
        "document.body.dataset.generation === '2'",
        Duration::from_secs(1)
    ));
    eprintln!("re-bake shown in {:?}", t0.elapsed());
    assert_eq!(
        b.eval("+document.body.dataset.objects"),
        json!(Level::open(&shapes).unwrap().object_count())
    );
    assert_eq!(b.eval("window.kilnView.camera.position.toArray()"), before);
    // a broken archive: a banner, the last good level still shown
    replace(&archive, b"not an archive");
    assert!(b.wait_for(
        "document.getElementById('banner').classList.contains('shown')",
        Duration::from_secs(2)
    ));
    assert_eq!(b.eval("document.body.dataset.generation"), json!("2"));
    assert!(b.errors().is_empty(), "console errors: {:?}", b.errors());
    assert_eq!(
        b.eval("document.getElementById('errors').textContent"),
        json!("")
    );
}

#[test]
fn screenshot_renders_the_colliders_headless() {
    let Some(_) = chromium() else { return };
    let archive = walk_course("shot");
    let out = archive.with_file_name("view.png");
    let s = baker()
        .args(["view", archive.to_str().unwrap(), "--source"])
        .arg(sample("walk_course.gltf"))
        .args(["--screenshot", out.to_str().unwrap(), "--camera", CAMERA])
        .status()
        .unwrap();
    assert!(s.success());
    let img = decode_png(&std::fs::read(&out).unwrap());
    assert_eq!((img.0, img.1), (1280, 800));
    let c = pixel(&img, CENTRE.0 as u32 + 40, CENTRE.1 as u32 + 40);
    assert!(is_trimesh_colour(c), "centre pixel {c:?}");
    // a bad camera is a usage error, and the earlier screenshot stays
    let s = baker()
        .args(["view", archive.to_str().unwrap()])
        .args(["--screenshot", out.to_str().unwrap(), "--camera", "1,2,3"])
        .status()
        .unwrap();
    assert_eq!(s.code(), Some(2));
    assert_eq!(decode_png(&std::fs::read(&out).unwrap()).0, 1280);
}
