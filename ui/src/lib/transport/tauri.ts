// The app window's way to Rust: Tauri commands and the `inbox` event. The only module that
// imports @tauri-apps/api.

import { invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';

import type { UiEvent } from '../bindings/UiEvent';
import { toIpcError } from '../words';
import type { CommandName } from '../bindings/CommandName';
import type { Transport } from './types';

export const tauriTransport: Transport = {
  async call<T>(command: CommandName, args?: Record<string, unknown>): Promise<T> {
    try {
      return await invoke<T>(command, args);
    } catch (error) {
      throw toIpcError(error);
    }
  },

  async listen(handler) {
    try {
      return await listen<UiEvent>('inbox', (event) => handler(event.payload));
    } catch (error) {
      throw toIpcError(error);
    }
  },
};
