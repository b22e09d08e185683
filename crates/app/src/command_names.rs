// The window's commands, named once. Everything else is made from these two lists or checked
// against them: the desktop shell's handler (src-tauri/src/lib.rs) and its permissions
// (src-tauri/build.rs, which also checks capabilities/default.json), the web server's list of
// what a paired device may call (inbox-web's api.rs, checked by its tests), and the UI's
// `CommandName` type (ui/src/lib/bindings/CommandName.ts, written by inbox-web's bindings
// test), so a misspelt or forgotten name fails a build or a test, never a click.
//
// A plain file of two macros and nothing else, because src-tauri/build.rs `include!`s it: a
// build script cannot depend on the crate it helps build.

/// Calls `$then! { <tokens given after $then> a, b, ... }` with every command that both the
/// window and a paired device (`answer-inbox serve`) have: reading and answering. The tokens
/// let a caller join the two lists into one call.
#[macro_export]
macro_rules! served_commands {
    ($then:ident $($before:tt)*) => {
        $then! {
            $($before)*
            list_pending,
            list_history,
            list_problems,
            open_request,
            submit_answers,
            decline_request,
            check_answers,
            list_snoozed,
            snooze_request,
            unsnooze_request,
            list_alike,
            answer_alike,
            get_status,
        }
    };
}

/// Calls `$then! { <tokens given after $then> a, b, ... }` with every command only the
/// desktop window has: settings, the policy, the server and its devices, the app itself. A
/// paired device is refused them.
#[macro_export]
macro_rules! window_only_commands {
    ($then:ident $($before:tt)*) => {
        $then! {
            $($before)*
            get_policy,
            check_policy,
            save_policy,
            open_policy_file,
            add_demo_requests,
            get_settings,
            save_settings,
            open_link,
            get_remote_access,
            pair_device,
            rename_device,
            revoke_device,
            get_app,
            set_start_at_login,
            open_log_folder,
            quit_app,
        }
    };
}
