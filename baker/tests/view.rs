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

fn baker() -> Command {
    Command::new(env!("CARGO_BIN_EXE_baker"))
}

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-view-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap_or_else(|e| {
        panic!(
            "connect to {addr}: {e} (request {:?})",
            String::from_utf8_lossy(&request[..request.len().min(80)])
        )
    });
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // the server may close before reading everything we meant to send;
    // then the client is done sending (a server waiting for more would
    // otherwise answer only at its 10 s limit)
    let _ = s.write_all(request);
    let _ = s.shutdown(std::net::Shutdown::Write);
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
        format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
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
    let dir = tmpdir("level");
    let archive = dir.join("walk.kiln");
    bake(&sample("walk_course.gltf"), &archive);
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
        assert_eq!(o["name"], level.object_name(i));
        assert!(
            ["box", "sphere", "capsule", "polytope", "bsp", "trimesh"]
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
    // the heat map: distances from a collider to its own render mesh
    let floor = objects
        .iter()
        .position(|o| o["kind"] == "trimesh" || o["kind"] == "box")
        .unwrap();
    let (status, f) = get_json(server.addr, &format!("/api/fidelity?object={floor}"));
    assert_eq!(status, 200, "{f}");
    let d = f["distances"].as_array().unwrap();
    assert_eq!(
        d.len() as u64,
        objects[floor]["geometry"]["vertices"].as_u64().unwrap()
    );
    assert!(f["max"].as_f64().unwrap() >= 0.0 && f["max"].as_f64().unwrap() < 1.0);
}

#[test]
fn the_query_endpoint_answers_as_the_runtime_does() {
    let dir = tmpdir("query");
    let archive = dir.join("walk.kiln");
    bake(&sample("walk_course.gltf"), &archive);
    let level = Level::open(&archive).unwrap();
    let server = serve(&archive, None);
    let mut s = 0x2545_F491u32;
    let mut rnd = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s as f32 / u32::MAX as f32
    };
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
                assert_eq!(a["hit"]["object"], level.object_name(h.instance), "{q}");
                assert_eq!(a["hit"]["instance"], h.instance, "{q}");
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
    let dir = tmpdir("hostile");
    let archive = dir.join("walk.kiln");
    bake(&sample("walk_course.gltf"), &archive);
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
    if let Some((s, _)) = raw(a, lie) {
        assert!((400..500).contains(&s), "{s}");
    }
    // 10,000 hostile requests: garbage bytes, broken request lines and
    // headers, bad JSON, huge numbers, wrong shapes
    let mut s = 0x9E37_79B9u32;
    let mut rnd = || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    };
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
        if let Some((status, _)) = raw(a, &req) {
            assert!((400..500).contains(&status), "request {i}: {status}");
        }
    }
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
    let dir = tmpdir("loopback");
    let archive = dir.join("walk.kiln");
    bake(&sample("walk_course.gltf"), &archive);
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
    assert!(eventually(Duration::from_secs(1), || get_json(
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
