//! `baker view`: starts the library's viewer server, then prints its
//! address (and opens a browser with `--open`) or renders one screenshot
//! headless (`--screenshot`) with Chromium and exits.

use crate::Usage;
use anyhow::{Context, Result, bail};
use baker_tools::view::{ViewOptions, Viewer, find_chromium, headless_args};
use std::path::PathBuf;
use std::process::Command;

/// The `view` subcommand's arguments.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The archive.
    archive: PathBuf,
    /// The glTF level it was baked from (render meshes, distance heat map).
    #[arg(long, value_name = "GLTF")]
    source: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 7878)]
    port: u16,
    /// Open the page in the system's browser.
    #[arg(long)]
    open: bool,
    /// Render the page headless (Chromium) to this PNG and exit.
    #[arg(long, value_name = "PNG")]
    screenshot: Option<PathBuf>,
    /// Camera for --screenshot: eye and target, "EX,EY,EZ,TX,TY,TZ"
    /// (default: the whole level framed).
    #[arg(long, value_name = "EX,EY,EZ,TX,TY,TZ")]
    camera: Option<String>,
    /// Screenshot size in pixels, "WIDTHxHEIGHT".
    #[arg(long, default_value = "1280x800")]
    size: String,
    /// For --screenshot: select this object (its rule shown and, with
    /// --source, its distance heat map).
    #[arg(long, value_name = "NAME")]
    select: Option<String>,
    /// Show the convex pieces (for physics engines) of the objects that
    /// have them, each in its own colour, in place of their colliders (the
    /// page's "convex pieces" box; `?pieces=1` in the address).
    #[arg(long)]
    pieces: bool,
}

fn parse_size(s: &str) -> Option<(u32, u32)> {
    let (w, h) = s.split_once(['x', 'X'])?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    ((16..=8192).contains(&w) && (16..=8192).contains(&h)).then_some((w, h))
}

fn parse_camera(s: &str) -> Option<String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .ok()?;
    (v.len() == 6 && v.iter().all(|x| x.is_finite())).then(|| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    })
}

pub(crate) fn view_cmd(a: Args) -> Result<()> {
    let size = parse_size(&a.size).ok_or_else(|| {
        Usage(format!(
            "--size {:?}: expected WIDTHxHEIGHT, e.g. 1280x800",
            a.size
        ))
    })?;
    let camera = match a.camera.as_deref() {
        None => None,
        Some(c) => Some(parse_camera(c).ok_or_else(|| {
            Usage(format!(
                "--camera {c:?}: expected six numbers EX,EY,EZ,TX,TY,TZ"
            ))
        })?),
    };
    if a.screenshot.is_none() && (camera.is_some() || a.select.is_some()) {
        return Err(Usage("--camera and --select go with --screenshot".into()).into());
    }
    let opts = ViewOptions {
        archive: a.archive.clone(),
        source: a.source.clone(),
        port: if a.screenshot.is_some() { 0 } else { a.port },
    };
    let viewer = Viewer::start(opts)?;
    if let Some(out) = a.screenshot {
        let url = viewer.serve_in_background(16);
        let mut query = Vec::new();
        if let Some(c) = camera {
            query.push(format!("camera={c}"));
        }
        if let Some(s) = &a.select {
            query.push(format!("select={}", percent_encode(s)));
        }
        if a.pieces {
            query.push("pieces=1".into());
        }
        let page = if query.is_empty() {
            url
        } else {
            format!("{url}?{}", query.join("&"))
        };
        return screenshot(&page, &out, size);
    }
    let url = if a.pieces {
        format!("{}?pieces=1", viewer.url())
    } else {
        viewer.url()
    };
    println!(
        "baker view: serving {} at {url} (127.0.0.1 only; Ctrl-C stops)",
        a.archive.display()
    );
    if a.open {
        open_browser(&url);
    }
    viewer.serve(16);
    Ok(())
}

/// Starts the system's browser on `url` (a failure is a warning: the
/// address is printed anyway).
fn open_browser(url: &str) {
    let cmd = if cfg!(target_os = "macos") {
        Command::new("open").arg(url).spawn()
    } else if cfg!(windows) {
        Command::new("cmd").args(["/C", "start", "", url]).spawn()
    } else {
        Command::new("xdg-open").arg(url).spawn()
    };
    if let Err(e) = cmd {
        eprintln!("warning: could not start a browser ({e}); open {url} by hand");
    }
}

/// Renders the page at `url` to `out` with headless Chromium. The PNG is
/// written beside `out` first and renamed over it only when Chromium made
/// one, so a failed run never loses an earlier screenshot.
fn screenshot(page: &str, out: &std::path::Path, size: (u32, u32)) -> Result<()> {
    let chromium = find_chromium().context(
        "--screenshot needs Chromium: install it (Debian: apt-get install chromium) or set KILN_CHROMIUM to its path",
    )?;
    let profile = tempdir()?;
    let tmp = out.with_extension("part.png");
    let _ = std::fs::remove_file(&tmp);
    let mut cmd = Command::new(&chromium);
    // a group of its own, so that no helper process outlives the shot
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd
        .args(headless_args(&profile, size.0, size.1))
        .arg("--virtual-time-budget=20000")
        .arg(format!("--screenshot={}", tmp.display()))
        .arg(page)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("cannot run {}", chromium.display()))?;
    let id = child.id();
    let status = child.wait_with_output()?.status;
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{id}")])
        .stderr(std::process::Stdio::null())
        .status();
    let _ = std::fs::remove_dir_all(&profile);
    if !status.success() || !tmp.is_file() {
        let _ = std::fs::remove_file(&tmp);
        bail!(
            "{} made no screenshot of {page} ({status})",
            chromium.display()
        );
    }
    std::fs::rename(&tmp, out).with_context(|| format!("{}: cannot write", out.display()))?;
    eprintln!("screenshot of {page} -> {}", out.display());
    Ok(())
}

/// A fresh private directory for Chromium's profile.
fn tempdir() -> Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("kiln-view-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    Ok(dir)
}

/// `s` with everything but unreserved URL characters percent-encoded.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
