//! Whether WebKit composites the window with GL: decided once, before Tauri or WebKit start.
//!
//! WebKitGTK composites a page's layers with OpenGL unless `WEBKIT_DISABLE_COMPOSITING_MODE`
//! is set to anything but `0`. Its `HardwareAccelerationManager` reads the variable in the
//! app's own process, and WebKit's processes inherit it. Without a GPU, that GL is Mesa's
//! software renderer (llvmpipe), and compositing costs 90–110 MiB more in the web process
//! for a page that needs none. The app with 10,000 pending uses 381–402 MiB with it and
//! 291–295 MiB without (docs/BENCHMARKS.md, issue 11, section 3), and is no slower without.
//! With a GPU, its buffers are the GPU's and scrolling and animation gain from it, so there
//! compositing stays as WebKit decides.
//!
//! **The rule: compositing is turned off when there is no GPU acceleration to be had**, that
//! is when
//!
//! - `LIBGL_ALWAYS_SOFTWARE` asks Mesa for its software renderer (`1`, `true`, `y` or
//!   `yes`, in any case: how Mesa's EGL, which WebKit uses, reads it), or
//! - no DRM render node (`/dev/dri/renderD*`) of a GPU opens for reading and writing, as
//!   Mesa opens it. This is WebKit's own sign: it offers the web process hardware buffers
//!   only when it finds a render node (`drmRenderNodeDevice()`), and otherwise renders with
//!   GL into shared memory, in software. A node this user may not open (no `render` group,
//!   no seat ACL) gives no acceleration either: Mesa falls back to software. A node of a
//!   driver that renders nothing (`vgem`, `vkms`: virtual devices for tests) is no GPU.
//!
//! A virtual machine's emulated GPU that publishes a render node without 3D counts as a GPU:
//! compositing then stays on, which costs the memory it cost before, nothing worse. Opening
//! a node may wake a sleeping discrete GPU for a few seconds; the nodes are tried in order
//! and the first that opens ends the search.
//!
//! **The user's value wins.** When `WEBKIT_DISABLE_COMPOSITING_MODE` is set, to anything,
//! it is left as it is: `WEBKIT_DISABLE_COMPOSITING_MODE=0` keeps compositing on without a
//! GPU (the benchmarks measure it so), `1` turns it off with one. When
//! `WEBKIT_FORCE_COMPOSITING_MODE` is set to anything but `0`, the user wants compositing,
//! and it is left on. Nothing is looked at then.
//!
//! [`decide`] is the rule, on the variables and the render nodes it is given; [`apply`]
//! reads this machine's and sets the variable. The app calls [`apply`] first thing, while it
//! is the only thread (setting a variable while another thread reads the environment is a
//! race), and logs the decision once logging is up.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// WebKit's switch: set to anything but `0`, no accelerated compositing.
pub const DISABLE_VAR: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
/// WebKit's other switch: set to anything but `0`, compositing for every page.
pub const FORCE_VAR: &str = "WEBKIT_FORCE_COMPOSITING_MODE";
/// Mesa's: true, GL renders in software whatever the hardware.
pub const SOFTWARE_GL_VAR: &str = "LIBGL_ALWAYS_SOFTWARE";

/// Where the DRM device nodes are, and where the kernel tells their drivers.
const DRI_DIR: &str = "/dev/dri";
const SYS_CLASS_DRM: &str = "/sys/class/drm";
/// Drivers with a render node but no renderer: the virtual GEM device and the virtual
/// kernel mode setting driver.
const NOT_GPUS: [&str; 2] = ["vgem", "vkms"];

/// What is done about compositing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Left as the user set `WEBKIT_DISABLE_COMPOSITING_MODE`.
    UserSet { value: String },
    /// Left on: the user set `WEBKIT_FORCE_COMPOSITING_MODE`.
    UserForced { value: String },
    /// Turned off: `LIBGL_ALWAYS_SOFTWARE` asks for software GL.
    OffSoftwareGl { value: String },
    /// Turned off: no GPU's render node opens; why not, node by node.
    OffNoGpu { nodes: Vec<String> },
    /// Left to WebKit (on): this GPU's render node opens.
    Gpu { node: PathBuf },
    /// Not WebKitGTK's platform: nothing to decide.
    NotWebKitGtk,
}

impl Decision {
    /// Whether the app sets `WEBKIT_DISABLE_COMPOSITING_MODE=1`.
    pub fn turns_off(&self) -> bool {
        matches!(
            self,
            Decision::OffSoftwareGl { .. } | Decision::OffNoGpu { .. }
        )
    }
}

/// The log line: which, and why.
impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::UserSet { value } => write!(
                f,
                "WebKit compositing {}: {DISABLE_VAR}={value:?} was set before the app started",
                if value == "0" { "on" } else { "off" }
            ),
            Decision::UserForced { value } => write!(
                f,
                "WebKit compositing on: {FORCE_VAR}={value:?} was set before the app started"
            ),
            Decision::OffSoftwareGl { value } => write!(
                f,
                "WebKit compositing off ({DISABLE_VAR}=1): {SOFTWARE_GL_VAR}={value:?} asks \
                 for software GL, where compositing costs memory and gains nothing; \
                 {DISABLE_VAR}=0 keeps it on"
            ),
            Decision::OffNoGpu { nodes } => {
                let seen = if nodes.is_empty() {
                    format!("none in {DRI_DIR}")
                } else {
                    nodes.join("; ")
                };
                write!(
                    f,
                    "WebKit compositing off ({DISABLE_VAR}=1): no GPU's render node opens \
                     ({seen}), so WebKit would composite with software GL, which costs \
                     memory and gains nothing; {DISABLE_VAR}=0 keeps it on"
                )
            }
            Decision::Gpu { node } => write!(
                f,
                "WebKit compositing on, as WebKit decides: the GPU's render node {} opens",
                node.display()
            ),
            Decision::NotWebKitGtk => write!(f, "WebKit compositing: not WebKitGTK, left alone"),
        }
    }
}

/// What the render nodes offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gpu {
    /// The first GPU's render node that opens for reading and writing.
    Found(PathBuf),
    /// None does: each node seen, and why it does not count.
    None(Vec<String>),
}

/// The rule (see the module's comment). `var` gives the environment; `gpu` looks at the
/// render nodes, and is called only when the variables leave the question open.
pub fn decide(var: impl Fn(&str) -> Option<OsString>, gpu: impl FnOnce() -> Gpu) -> Decision {
    let text = |name: &str| var(name).map(|value| value.to_string_lossy().into_owned());
    if let Some(value) = text(DISABLE_VAR) {
        return Decision::UserSet { value };
    }
    if let Some(value) = text(FORCE_VAR).filter(|value| value != "0") {
        return Decision::UserForced { value };
    }
    if let Some(value) = text(SOFTWARE_GL_VAR).filter(|value| mesa_true(value)) {
        return Decision::OffSoftwareGl { value };
    }
    match gpu() {
        Gpu::Found(node) => Decision::Gpu { node },
        Gpu::None(nodes) => Decision::OffNoGpu { nodes },
    }
}

/// Mesa's `env_var_as_boolean`, true side: `1`, `true`, `y`, `yes` (letters in any case).
fn mesa_true(value: &str) -> bool {
    value == "1"
        || ["true", "y", "yes"]
            .iter()
            .any(|t| value.eq_ignore_ascii_case(t))
}

/// The render nodes in `dri` (`renderD128`, ...), in order, each with its driver from
/// `sys_class_drm/<node>/device/driver`: the first of a GPU that opens for reading and
/// writing, or why none does. Later nodes are not opened.
pub fn find_gpu(dri: &Path, sys_class_drm: &Path) -> Gpu {
    let mut names: Vec<OsString> = match std::fs::read_dir(dri) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok().map(|entry| entry.file_name()))
            .filter(|name| name.to_string_lossy().starts_with("renderD"))
            .collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Gpu::None(vec![format!("{}: {error}", dri.display())]),
    };
    // renderD128 before renderD129, and renderD99 (never seen) before renderD128.
    names.sort_by_key(|name| (name.len(), name.clone()));
    let mut why_not = Vec::new();
    for name in names {
        let node = dri.join(&name);
        let driver = std::fs::read_link(sys_class_drm.join(&name).join("device/driver"))
            .ok()
            .and_then(|link| Some(link.file_name()?.to_string_lossy().into_owned()));
        if let Some(driver) = driver.as_deref().filter(|d| NOT_GPUS.contains(d)) {
            why_not.push(format!("{}: {driver}, not a GPU", node.display()));
            continue;
        }
        match std::fs::File::options().read(true).write(true).open(&node) {
            Ok(_) => return Gpu::Found(node),
            Err(error) => why_not.push(format!("{}: {error}", node.display())),
        }
    }
    Gpu::None(why_not)
}

/// Decides for this process and this machine, and sets `WEBKIT_DISABLE_COMPOSITING_MODE=1`
/// when compositing is to be off. Call it before any other thread starts, and before Tauri;
/// log what it returns.
pub fn apply() -> Decision {
    if !cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd"
    )) {
        return Decision::NotWebKitGtk;
    }
    let decision = decide(
        |name| std::env::var_os(name),
        || find_gpu(Path::new(DRI_DIR), Path::new(SYS_CLASS_DRM)),
    );
    if decision.turns_off() {
        std::env::set_var(DISABLE_VAR, "1");
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    fn gpu() -> Gpu {
        Gpu::Found(PathBuf::from("/dev/dri/renderD128"))
    }

    fn no_gpu() -> Gpu {
        Gpu::None(Vec::new())
    }

    /// `decision` turns compositing off, and its log line says `why`.
    fn assert_off_saying(decision: &Decision, why: &str) {
        assert!(decision.turns_off(), "{decision:?}");
        assert!(decision.to_string().contains(why), "{decision}");
    }

    fn not_asked() -> Gpu {
        panic!("the render nodes were looked at although the variables decide")
    }

    #[test]
    fn without_a_gpu_compositing_is_turned_off() {
        let decision = decide(env(&[]), no_gpu);
        assert_eq!(decision, Decision::OffNoGpu { nodes: Vec::new() });
        assert_off_saying(&decision, "none in /dev/dri");
    }

    #[test]
    fn with_a_gpu_it_is_left_to_webkit() {
        let decision = decide(env(&[]), gpu);
        assert_eq!(
            decision,
            Decision::Gpu {
                node: PathBuf::from("/dev/dri/renderD128")
            }
        );
        assert!(!decision.turns_off());
    }

    #[test]
    fn the_users_value_wins_whatever_it_is_and_nothing_is_looked_at() {
        for value in ["0", "1", "", "yes"] {
            let decision = decide(env(&[(DISABLE_VAR, value)]), not_asked);
            assert_eq!(
                decision,
                Decision::UserSet {
                    value: value.into()
                }
            );
            assert!(!decision.turns_off(), "the app sets nothing over {value:?}");
        }
        // Over the other variables too.
        let decision = decide(
            env(&[(DISABLE_VAR, "0"), (SOFTWARE_GL_VAR, "1")]),
            not_asked,
        );
        assert!(!decision.turns_off());
        assert!(decision.to_string().starts_with("WebKit compositing on"));
        let off = decide(env(&[(DISABLE_VAR, "1")]), not_asked).to_string();
        assert!(off.starts_with("WebKit compositing off"), "{off}");
    }

    #[test]
    fn forcing_compositing_keeps_it_on_but_zero_does_not_force() {
        let decision = decide(env(&[(FORCE_VAR, "1"), (SOFTWARE_GL_VAR, "1")]), not_asked);
        assert_eq!(decision, Decision::UserForced { value: "1".into() });
        assert!(!decision.turns_off());
        // `0` is WebKit's "not forced": the rule goes on.
        assert!(decide(env(&[(FORCE_VAR, "0")]), no_gpu).turns_off());
    }

    #[test]
    fn software_gl_turns_it_off_even_with_a_gpu_as_mesa_reads_the_variable() {
        for value in ["1", "true", "TRUE", "y", "Yes"] {
            let decision = decide(env(&[(SOFTWARE_GL_VAR, value)]), not_asked);
            assert_eq!(
                decision,
                Decision::OffSoftwareGl {
                    value: value.into()
                }
            );
        }
        for value in ["0", "false", "no", "", "2"] {
            let decision = decide(env(&[(SOFTWARE_GL_VAR, value)]), gpu);
            assert!(!decision.turns_off(), "{value:?} is not true to Mesa");
        }
    }

    /// A DRM directory and a sysfs one: `nodes` are (name, driver, opens).
    fn machine(nodes: &[(&str, Option<&str>, bool)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let (dri, sys) = (root.path().join("dri"), root.path().join("sys"));
        std::fs::create_dir_all(&dri).unwrap();
        std::fs::write(dri.join("card0"), "").unwrap();
        for (name, driver, opens) in nodes {
            if *opens {
                std::fs::write(dri.join(name), "").unwrap();
            } else {
                // A directory does not open for writing, even for root, as a device this
                // user may not use would not.
                std::fs::create_dir(dri.join(name)).unwrap();
            }
            if let Some(driver) = driver {
                let device = sys.join(name).join("device");
                std::fs::create_dir_all(&device).unwrap();
                let target = root.path().join("bus/drivers").join(driver);
                std::fs::create_dir_all(&target).unwrap();
                std::os::unix::fs::symlink(&target, device.join("driver")).unwrap();
            }
        }
        root
    }

    fn find(root: &tempfile::TempDir) -> Gpu {
        find_gpu(&root.path().join("dri"), &root.path().join("sys"))
    }

    #[test]
    fn the_first_gpu_node_that_opens_is_found() {
        let root = machine(&[
            ("renderD129", Some("amdgpu"), true),
            ("renderD128", Some("i915"), true),
        ]);
        assert_eq!(find(&root), Gpu::Found(root.path().join("dri/renderD128")));
        // No driver known (no sysfs): a node that opens still counts.
        let root = machine(&[("renderD128", None, true)]);
        assert_eq!(find(&root), Gpu::Found(root.path().join("dri/renderD128")));
    }

    #[test]
    fn nodes_that_do_not_open_or_render_nothing_are_no_gpu() {
        let root = machine(&[
            ("renderD128", Some("vgem"), true),
            ("renderD129", Some("i915"), false),
            ("renderD130", Some("amdgpu"), true),
        ]);
        assert_eq!(find(&root), Gpu::Found(root.path().join("dri/renderD130")));

        let root = machine(&[
            ("renderD128", Some("vgem"), true),
            ("renderD129", Some("i915"), false),
        ]);
        let Gpu::None(why) = find(&root) else {
            panic!("found a GPU")
        };
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[0].ends_with("renderD128: vgem, not a GPU"), "{why:?}");
        assert!(why[1].contains("renderD129: "), "{why:?}");
        assert_off_saying(&decide(env(&[]), || find(&root)), "vgem, not a GPU");
    }

    #[test]
    fn no_dri_directory_or_no_render_node_is_no_gpu() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            find_gpu(&root.path().join("dri"), &root.path().join("sys")),
            Gpu::None(Vec::new())
        );
        let root = machine(&[]); // card0 only: a display, no renderer
        assert_eq!(find(&root), Gpu::None(Vec::new()));
    }
}
