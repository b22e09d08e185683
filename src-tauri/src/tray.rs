//! The tray icon: the pending count, and Open / Do not disturb / Quit.

use std::sync::Arc;

use inbox_desk::Desk;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager, Wry};

/// The tray icon and the menu item that must follow the settings.
pub struct Tray {
    icon: TrayIcon,
    do_not_disturb: CheckMenuItem<Wry>,
}

pub fn create(app: &AppHandle, desk: &Arc<Desk>) -> tauri::Result<Tray> {
    let open = MenuItem::with_id(app, "open", "Open Answer Inbox", true, None::<&str>)?;
    let do_not_disturb = CheckMenuItem::with_id(
        app,
        "do-not-disturb",
        "Do not disturb",
        true,
        desk.settings().do_not_disturb,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&open, &do_not_disturb, &separator, &quit])?;
    let mut builder = TrayIconBuilder::with_id("inbox")
        .menu(&menu)
        .tooltip("Answer Inbox")
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => crate::show_main_window(app),
            "do-not-disturb" => {
                if let Some(desk) = app.try_state::<Arc<Desk>>() {
                    let on = !desk.settings().do_not_disturb;
                    if let Err(error) = desk.set_do_not_disturb(on) {
                        tracing::warn!("cannot change do-not-disturb: {error}");
                    }
                }
            }
            "quit" => app.exit(0),
            _ => {}
        })
        .on_tray_icon_event(|icon, event| {
            if let TrayIconEvent::DoubleClick { .. } = event {
                crate::show_main_window(icon.app_handle());
            }
        });
    if let Some(image) = app.default_window_icon() {
        builder = builder.icon(image.clone());
    }
    let icon = builder.build(app)?;
    Ok(Tray {
        icon,
        do_not_disturb,
    })
}

impl Tray {
    /// Shows the count next to the icon and in its tooltip, and the do-not-disturb tick.
    pub fn update(&self, pending: u32, do_not_disturb: bool) {
        let title = (pending > 0).then(|| pending.to_string());
        let _ = self.icon.set_title(title.as_deref());
        let _ = self
            .icon
            .set_tooltip(Some(format!("Answer Inbox: {pending} pending")));
        let _ = self.do_not_disturb.set_checked(do_not_disturb);
    }
}
