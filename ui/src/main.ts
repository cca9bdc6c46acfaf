import { mount } from "svelte";
import App from "./App.svelte";
import { createTauriBackend } from "./lib/backend/tauri";
import { applyTheme } from "./lib/model/theme";
import "./app.css";

// The desktop's look from the first paint; the saved choice follows once Settings load.
applyTheme("system");

// The only place the real backend is chosen; everything below receives it.
mount(App, { target: document.getElementById("app")!, props: { backend: createTauriBackend() } });
