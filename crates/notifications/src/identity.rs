//! Whose bubbles these are: the desktop entry and the icon that notification centres use to
//! group bubbles under the app and show its face, instead of an anonymous question mark.
//!
//! The `.deb` installs `dev.answer-inbox.desktop.desktop` (the app's reverse-DNS identifier,
//! as the desktop entry specification asks of a file name) and the icon set as
//! `answer-inbox-desktop` in the hicolor theme (after the main binary). Run from a source build nothing is installed, so the icon is written once to the
//! user's cache directory and given by its absolute path, which the specification also
//! allows.

use std::path::{Path, PathBuf};

/// The desktop entry's name without `.desktop`, for the `desktop-entry` hint. Both front
/// ends use it: `answer-inbox watch` ships in the same package as the window.
pub const DESKTOP_ENTRY: &str = "dev.answer-inbox.desktop";

/// The icon's name in the hicolor theme.
pub const ICON_NAME: &str = "answer-inbox-desktop";

/// The app's icon, 128 pixels square: the very file the package installs (one icon set, made
/// from src-tauri/icons/source.svg).
const ICON_PNG: &[u8] = include_bytes!("../../../src-tauri/icons/128x128.png");

/// The icon when neither the theme nor the cache has one: a stock icon every theme has.
const FALLBACK_ICON: &str = "dialog-question";

/// What a bubble says about who sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppIdentity {
    /// The `desktop-entry` hint.
    pub desktop_entry: String,
    /// The `app_icon` argument: a theme icon name or an absolute path.
    pub icon: String,
}

impl AppIdentity {
    /// The installed icon's name when a data directory has it in the hicolor theme; else
    /// the icon copied to the cache directory; else a stock icon.
    pub fn detect() -> AppIdentity {
        let data_dirs = xdg_data_dirs();
        let icon = if icon_installed(&data_dirs) {
            ICON_NAME.to_owned()
        } else {
            match dirs::cache_dir().map(|cache| cached_icon(&cache.join("answer-inbox"))) {
                Some(Ok(path)) => path.display().to_string(),
                Some(Err(error)) => {
                    tracing::debug!("cannot keep the app's icon for notifications: {error}");
                    FALLBACK_ICON.to_owned()
                }
                None => FALLBACK_ICON.to_owned(),
            }
        };
        AppIdentity {
            desktop_entry: DESKTOP_ENTRY.to_owned(),
            icon,
        }
    }
}

impl Default for AppIdentity {
    /// The desktop entry with the stock icon, for tests and callers that do not look.
    fn default() -> AppIdentity {
        AppIdentity {
            desktop_entry: DESKTOP_ENTRY.to_owned(),
            icon: FALLBACK_ICON.to_owned(),
        }
    }
}

/// `$XDG_DATA_HOME` and `$XDG_DATA_DIRS` (with the specification's defaults), in order.
fn xdg_data_dirs() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = dirs::data_dir().into_iter().collect();
    let system = std::env::var("XDG_DATA_DIRS")
        .ok()
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| "/usr/local/share:/usr/share".to_owned());
    found.extend(
        system
            .split(':')
            .filter(|dir| Path::new(dir).is_absolute())
            .map(PathBuf::from),
    );
    found
}

/// Whether any data directory has the app's icon in the hicolor theme (at any size).
fn icon_installed(data_dirs: &[PathBuf]) -> bool {
    let name = format!("{ICON_NAME}.png");
    data_dirs.iter().any(|dir| {
        std::fs::read_dir(dir.join("icons/hicolor"))
            .map(|sizes| {
                sizes
                    .flatten()
                    .any(|size| size.path().join("apps").join(&name).is_file())
            })
            .unwrap_or(false)
    })
}

/// The icon in `dir`, written there (atomically, by rename) unless the same bytes already
/// are, so a newer build's icon replaces an older one.
fn cached_icon(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("{ICON_NAME}.png"));
    if std::fs::read(&path).is_ok_and(|bytes| bytes == ICON_PNG) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{ICON_NAME}.png.{}", std::process::id()));
    std::fs::write(&tmp, ICON_PNG)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_installed_icon_is_found_by_its_theme_name_at_any_size() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!icon_installed(&[dir.path().to_owned()]));
        let apps = dir.path().join("icons/hicolor/256x256/apps");
        std::fs::create_dir_all(&apps).unwrap();
        std::fs::write(apps.join("answer-inbox-desktop.png"), ICON_PNG).unwrap();
        assert!(icon_installed(&[
            PathBuf::from("/nonexistent"),
            dir.path().to_owned()
        ]));
    }

    #[test]
    fn the_cached_icon_is_written_once_and_replaced_when_it_differs() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("answer-inbox");
        let path = cached_icon(&cache).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), ICON_PNG);
        assert!(path.is_absolute());

        std::fs::write(&path, b"an older icon").unwrap();
        assert_eq!(cached_icon(&cache).unwrap(), path);
        assert_eq!(std::fs::read(&path).unwrap(), ICON_PNG);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
    }

    #[test]
    fn the_embedded_icon_is_a_png() {
        assert_eq!(&ICON_PNG[..8], b"\x89PNG\r\n\x1a\n");
    }
}
