//! `package/build` for real: it builds the runtime image and the xpkg with buildah, the
//! image runs `fn-hcl version` (`buildah run`) and serves a RunFunction call over loopback
//! as the non-root user, and the xpkg's manifest has exactly one layer annotated
//! `io.crossplane.xpkg: base`, holding a valid package.yaml, beside the runtime's layers.
//!
//! Needs buildah (`.ci/run` installs it). Without it the test says so loudly and skips,
//! except under CI=true, where it fails. The binary packaged is target/release/fn-hcl when
//! it exists (CI builds it first), else this build's own `fn-hcl`; FN_HCL_BINARY overrides.

mod common;
mod server_support;

use serde_json::Value;
use server_support::process::Proc;
use server_support::{call, client, http_get, request};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn buildah_available() -> bool {
    Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A fresh directory of this test process (unique across the tests running in parallel).
fn scratch(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let d = std::env::temp_dir().join(format!("fn-hcl-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// buildah on a private vfs store.
struct Buildah {
    store: PathBuf,
}

impl Buildah {
    fn cmd(&self) -> Command {
        let mut c = Command::new("buildah");
        c.arg("--root")
            .arg(self.store.join("root"))
            .arg("--runroot")
            .arg(self.store.join("run"))
            .args(["--storage-driver", "vfs"]);
        c
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.cmd().args(args).output().expect("run buildah");
        assert!(
            out.status.success(),
            "buildah {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for Buildah {
    fn drop(&mut self) {
        let _ = self.cmd().args(["rm", "--all"]).output();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

/// `buildah run` arguments for `fn-hcl ARGS` in container `c` (chroot isolation, so it
/// works unprivileged and shares the host's loopback).
fn in_image<'a>(c: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        "--isolation",
        "chroot",
        c,
        "--",
        "/usr/local/bin/fn-hcl",
    ];
    v.extend_from_slice(args);
    v
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// The pid of the `fn-hcl serve` listening on `port` (the process `buildah run` started).
fn serve_pid(port: u16) -> Option<u32> {
    let needle = format!("127.0.0.1:{port}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let is_fn_hcl = args.first().is_some_and(|a| a.ends_with("/fn-hcl"));
        (is_fn_hcl && args.iter().any(|a| a == "serve") && args.contains(&needle)).then_some(pid)
    })
}

fn uid_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn untar(archive: &Path, dir: &Path, gzip: bool) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let flags = if gzip { "-xzf" } else { "-xf" };
    let ok = Command::new("tar")
        .arg(flags)
        .arg(archive)
        .arg("-C")
        .arg(dir)
        .status()
        .expect("tar")
        .success();
    assert!(ok, "tar {flags} {}", archive.display());
}

fn blob(layout: &Path, digest: &str) -> PathBuf {
    let (algo, hex) = digest.split_once(':').expect("digest");
    layout.join("blobs").join(algo).join(hex)
}

fn json_file(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).expect("read")).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn package_build_makes_a_runnable_image_and_a_valid_xpkg() {
    if !buildah_available() {
        common::missing(
            "package_image",
            "buildah is not installed, so the image and the xpkg were NOT built or checked \
             (Debian: apt-get install -y buildah; .ci/run installs it)",
        );
        return;
    }
    let release = Path::new(ROOT).join("target/release/fn-hcl");
    let binary = std::env::var("FN_HCL_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            if release.is_file() {
                release
            } else {
                PathBuf::from(env!("CARGO_BIN_EXE_fn-hcl"))
            }
        });
    eprintln!("packaging {}", binary.display());
    let out = scratch("package-out");
    let built = Command::new(Path::new(ROOT).join("package/build"))
        .arg(&out)
        .env("FN_HCL_BINARY", &binary)
        .output()
        .expect("run package/build");
    assert!(
        built.status.success(),
        "package/build failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&built.stdout));

    // The runtime image: `fn-hcl version` inside it.
    let b = Buildah {
        store: scratch("package-store"),
    };
    let archive = format!("oci-archive:{}", out.join("runtime.oci.tar").display());
    let c = b.run(&["from", "--pull-never", &archive]);
    let version = b.run(&in_image(&c, &["version"]));
    assert_eq!(version, format!("fn-hcl {}", env!("CARGO_PKG_VERSION")));
    let inspect: Value = serde_json::from_str(&b.run(&["inspect", "--type", "container", &c]))
        .expect("inspect JSON");
    let config = &inspect["OCIv1"]["config"];
    assert_eq!(config["User"], "65532:65532", "{config}");
    assert_eq!(
        config["Entrypoint"],
        serde_json::json!(["/usr/local/bin/fn-hcl", "serve"])
    );
    assert!(config["ExposedPorts"].get("9443/tcp").is_some(), "{config}");
    assert!(config["ExposedPorts"].get("8080/tcp").is_some(), "{config}");
    assert_eq!(
        config["Labels"]["org.opencontainers.image.licenses"],
        "Apache-2.0"
    );

    // `fn-hcl serve` from the image answers a RunFunction call over loopback.
    let (port, metrics_port) = (free_port(), free_port());
    let (addr, metrics) = (
        format!("127.0.0.1:{port}"),
        format!("127.0.0.1:{metrics_port}"),
    );
    let server = Proc::start(b.cmd().args(in_image(&c, &["serve"])).args([
        "--insecure",
        "--address",
        &addr,
        "--metrics-address",
        &metrics,
    ]));
    let mut cl = client(server.grpc).await;
    let rsp = call(
        &mut cl,
        request("from-the-image", "-- main.hcl --\nlocals {\n  x = 1\n}\n"),
    )
    .await
    .expect("RunFunction answered by the image");
    assert_eq!(rsp.meta.map(|m| m.tag), Some("from-the-image".to_string()));
    let ready = http_get(server.metrics, "/readyz").await;
    assert!(ready.starts_with("HTTP/1.1 200"), "{ready}");
    let pid = serve_pid(port).expect("the serve process");
    assert_eq!(
        uid_of(pid),
        Some(65532),
        "the image runs as the non-root user"
    );
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let (status, lines) = server.wait(Duration::from_secs(30));
    assert!(status.success(), "{lines:?}");

    // The xpkg: one layer annotated base, holding package.yaml alone, which is a valid
    // Function package; the runtime's layers (the binary) beside it; the user non-root.
    let layout = out.join("xpkg-layout");
    untar(&out.join("fn-hcl.xpkg"), &layout, false);
    let index = json_file(&layout.join("index.json"));
    let manifests = index["manifests"].as_array().expect("manifests");
    assert_eq!(manifests.len(), 1);
    let manifest = json_file(&blob(
        &layout,
        manifests[0]["digest"].as_str().expect("digest"),
    ));
    let layers = manifest["layers"].as_array().expect("layers");
    let base: Vec<&Value> = layers
        .iter()
        .filter(|l| l["annotations"]["io.crossplane.xpkg"] == "base")
        .collect();
    assert_eq!(base.len(), 1, "exactly one base layer: {manifest}");
    let base_digest = base[0]["digest"].as_str().expect("digest");
    let base_dir = out.join("base-layer");
    untar(&blob(&layout, base_digest), &base_dir, true);
    let entries: Vec<String> = std::fs::read_dir(&base_dir)
        .expect("read")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["package.yaml"]);
    let text = std::fs::read_to_string(base_dir.join("package.yaml")).expect("package.yaml");
    let docs = common::k8s::yaml_documents(&text).expect("package.yaml is a YAML stream");
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["apiVersion"], "meta.pkg.crossplane.io/v1");
    assert_eq!(docs[0]["kind"], "Function");
    if let Some(shared) = common::shared_dir("package_image: package.yaml's schema") {
        let kinds = common::k8s::load_kinds(&[&shared.join("crossplane/meta")]);
        let k = common::k8s::schema_for(&kinds, &docs[0]).expect("meta schema");
        let errors = common::k8s::validate(&k.schema, &docs[0]);
        assert!(errors.is_empty(), "package.yaml: {errors:?}");
    }
    let has_binary = layers.iter().any(|l| {
        let listing = Command::new("tar")
            .arg("-tzf")
            .arg(blob(&layout, l["digest"].as_str().unwrap_or_default()))
            .output()
            .expect("tar -t");
        String::from_utf8_lossy(&listing.stdout)
            .lines()
            .any(|n| n.trim_start_matches("./") == "usr/local/bin/fn-hcl")
    });
    assert!(has_binary, "the runtime binary is in the package image");
    let config = json_file(&blob(
        &layout,
        manifest["config"]["digest"].as_str().expect("config"),
    ));
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Labels"][format!("io.crossplane.xpkg:{base_digest}")],
        "base"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Runs package/build with `envs` (and PATH replaced when `path` is given); exit code and
/// stderr.
fn package_build(envs: &[(&str, &str)], path: Option<&Path>) -> (Option<i32>, String) {
    let out = scratch("package-refused");
    let mut cmd = Command::new(Path::new(ROOT).join("package/build"));
    cmd.arg(&out).envs(envs.iter().copied());
    if let Some(p) = path {
        cmd.env("PATH", p);
    }
    let r = cmd.output().expect("run package/build");
    let _ = std::fs::remove_dir_all(&out);
    (
        r.status.code(),
        String::from_utf8_lossy(&r.stderr).into_owned(),
    )
}

#[test]
fn package_build_without_the_binary_says_how_to_build_it() {
    let (code, err) = package_build(&[("FN_HCL_BINARY", "/nonexistent/fn-hcl")], None);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("no fn-hcl binary at /nonexistent/fn-hcl"),
        "{err}"
    );
    assert!(err.contains("cargo build --release --locked"), "{err}");
    assert!(!err.contains("Traceback"), "{err}");
}

#[test]
fn package_build_without_buildah_says_how_to_install_it() {
    // A PATH with python3 (the script's interpreter) and nothing else.
    let bin = scratch("package-path");
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .map(PathBuf::from)
        .chain(std::env::var_os("PATH").into_iter().flat_map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("python3"))
                .collect::<Vec<_>>()
        }))
        .find(|p| p.is_file())
        .expect("python3");
    std::os::unix::fs::symlink(&python, bin.join("python3")).expect("symlink");
    let (code, err) = package_build(
        &[("FN_HCL_BINARY", env!("CARGO_BIN_EXE_fn-hcl"))],
        Some(&bin),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("buildah not found"), "{err}");
    assert!(err.contains("apt-get install -y buildah"), "{err}");
    let _ = std::fs::remove_dir_all(&bin);
}
