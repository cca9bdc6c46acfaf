import { mount } from "svelte";
import App from "./App.svelte";
import { createTauriBackend } from "./lib/backend/tauri";
import "./app.css";

// The only place the real backend is chosen; everything below receives it.
mount(App, { target: document.getElementById("app")!, props: { backend: createTauriBackend() } });
