// holdctl serve's page: pick or upload an image, draw a mask, queue a restoration or a sampling run,
// poll its job, show the result. Plain JavaScript; everything it loads comes from the server.
"use strict";

(function () {
  const body = document.body;
  const C = +body.dataset.c, H = +body.dataset.h, W = +body.dataset.w;
  const testCount = +body.dataset.testCount;
  const maxUploadBytes = (+body.dataset.maxUploadKib) * 1024;
  const $ = (id) => document.getElementById(id);

  const canvas = $("canvas");
  const ctx = canvas.getContext("2d");
  canvas.style.height = Math.round(280 * H / W) + "px";

  let pixels = null;                  // RGBA of the image, W×H
  const mask = new Uint8Array(W * H); // 1: missing (drawn)
  let source = "";                    // "test:N" or "upload:ID"
  let drawing = false;
  let polling = null;                 // the job this page follows

  // Errors: every failure ends up here, in the red box at the top.
  function showError(msg) {
    const box = $("error");
    box.textContent = msg;
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
  }
  function clearError() {
    $("error").hidden = true;
    $("error").textContent = "";
  }
  window.addEventListener("error", (e) => showError("page error: " + e.message));
  window.addEventListener("unhandledrejection", (e) => showError(String(e.reason && e.reason.message || e.reason)));

  // api fetches path and returns its JSON; an answer ≥ 400 throws its message.
  async function api(path, form) {
    const opts = form ? { method: "POST", body: form, headers: { "X-Holdctl": "page" } } : {};
    let resp;
    try {
      resp = await fetch(path, opts);
    } catch (e) {
      throw new Error("the server did not answer (" + e.message + "); is holdctl serve still running?");
    }
    const text = await resp.text();
    let data = null;
    try { data = JSON.parse(text); } catch (e) { /* not JSON: shown as text below */ }
    if (!resp.ok) {
      const msg = data && data.error ? data.error : text.trim() || resp.statusText;
      throw new Error(msg + " (HTTP " + resp.status + ")");
    }
    if (data === null) {
      throw new Error("unexpected answer from the server: " + text.slice(0, 200));
    }
    return data;
  }

  // The image and the mask on the canvas (one canvas pixel per image pixel, scaled by CSS).
  function render() {
    if (!pixels) {
      return;
    }
    const out = ctx.createImageData(W, H);
    out.data.set(pixels);
    for (let p = 0; p < W * H; p++) {
      if (mask[p]) {
        out.data[4 * p] = Math.round(0.4 * out.data[4 * p] + 0.6 * 255);
        out.data[4 * p + 1] = Math.round(0.4 * out.data[4 * p + 1]);
        out.data[4 * p + 2] = Math.round(0.4 * out.data[4 * p + 2]);
      }
    }
    ctx.putImageData(out, 0, 0);
    let n = 0;
    for (const m of mask) { n += m; }
    $("mask-count").textContent = n + (n === 1 ? " pixel" : " pixels") + " marked.";
  }

  function loadImage(url, src, name) {
    return new Promise((resolve, reject) => {
      const img = new Image();
      img.onload = () => {
        ctx.clearRect(0, 0, W, H);
        ctx.drawImage(img, 0, 0, W, H);
        pixels = new Uint8ClampedArray(ctx.getImageData(0, 0, W, H).data);
        source = src;
        $("image-name").textContent = name;
        render();
        resolve();
      };
      img.onerror = () => reject(new Error("could not load " + name + " from the server"));
      img.src = url;
    });
  }

  async function loadTest(i) {
    clearError();
    if (!(Number.isInteger(i) && i >= 0 && i < testCount)) {
      showError("test image " + i + ": want a whole number in [0, " + (testCount - 1) + "]");
      return;
    }
    try {
      await loadImage("/api/test-image?i=" + i, "test:" + i, "Test image " + i + ".");
    } catch (e) {
      showError(e.message);
    }
  }

  if ($("load-test")) {
    $("load-test").addEventListener("click", () => loadTest(Number($("test-index").value)));
    $("random-test").addEventListener("click", () => {
      const i = Math.floor(Math.random() * testCount);
      $("test-index").value = i;
      loadTest(i);
    });
  }

  $("upload").addEventListener("change", async () => {
    const input = $("upload");
    const file = input.files[0];
    if (!file) {
      return;
    }
    clearError();
    try {
      if (file.size > maxUploadBytes) {
        throw new Error("the file is " + Math.ceil(file.size / 1024) + " KiB; the server takes " +
          (maxUploadBytes / 1024) + " KiB at most (a PNG of " + W + "×" + H + " pixels is far smaller)");
      }
      const form = new FormData();
      form.append("image", file, file.name);
      const up = await api("/api/upload", form);
      await loadImage("/api/upload-image?id=" + encodeURIComponent(up.id), "upload:" + up.id, "Uploaded " + file.name + ".");
    } catch (e) {
      showError("upload of " + file.name + ": " + e.message);
    } finally {
      input.value = "";
    }
  });

  // Drawing the mask.
  function paint(e) {
    const r = canvas.getBoundingClientRect();
    const x = Math.floor((e.clientX - r.left) / r.width * W);
    const y = Math.floor((e.clientY - r.top) / r.height * H);
    const b = +$("brush").value;
    for (let dy = -b; dy <= b; dy++) {
      for (let dx = -b; dx <= b; dx++) {
        const xx = x + dx, yy = y + dy;
        if (xx >= 0 && xx < W && yy >= 0 && yy < H) {
          mask[yy * W + xx] = 1;
        }
      }
    }
    if ($("task").value !== "inpaint-mask") {
      $("task").value = "inpaint-mask";
      showOptions();
    }
    render();
  }
  canvas.addEventListener("mousedown", (e) => {
    if (e.button !== 0) {
      return;
    }
    if (!pixels) {
      showError("pick a test image or upload a PNG before drawing on it");
      return;
    }
    drawing = true;
    paint(e);
    e.preventDefault();
  });
  canvas.addEventListener("mousemove", (e) => { if (drawing) { paint(e); } });
  window.addEventListener("mouseup", () => { drawing = false; });
  $("clear-mask").addEventListener("click", () => { mask.fill(0); render(); });

  function showOptions() {
    for (const el of document.querySelectorAll(".opt")) {
      el.hidden = el.dataset.task !== $("task").value;
    }
  }
  $("task").addEventListener("change", showOptions);
  showOptions();

  // Jobs.
  function setBusy(busy) {
    $("restore").disabled = busy;
    $("sample").disabled = busy;
  }

  async function start(path, form) {
    clearError();
    $("result").hidden = true;
    setBusy(true);
    try {
      const j = await api(path, form);
      $("progress-section").hidden = false;
      $("progress").value = 0;
      $("status").textContent = "queued";
      follow(j.id);
    } catch (e) {
      setBusy(false);
      showError(e.message);
    }
  }

  function follow(id) {
    polling = id;
    const tick = async () => {
      if (polling !== id) {
        return;
      }
      let st;
      try {
        st = await api("/api/job?id=" + encodeURIComponent(id));
      } catch (e) {
        polling = null;
        setBusy(false);
        showError(e.message);
        return;
      }
      if (st.state === "waiting") {
        $("status").textContent = "waiting: " + st.ahead + (st.ahead === 1 ? " job" : " jobs") + " before this one";
      } else if (st.state === "running") {
        const f = st.evaluations_expected > 0 ? Math.min(0.99, st.evaluations / st.evaluations_expected) : 0;
        $("progress").value = f;
        $("status").textContent = "running: " + st.evaluations + " of " + st.evaluations_expected + " network evaluations";
      } else if (st.state === "done") {
        $("progress").value = 1;
        $("status").textContent = "done";
        polling = null;
        setBusy(false);
        showResult(st);
        return;
      } else {
        $("status").textContent = "failed";
        polling = null;
        setBusy(false);
        showError(st.error || "the job failed");
        return;
      }
      setTimeout(tick, 250);
    };
    tick();
  }

  const captions = { degraded: "degraded (A⁺y)", restored: "restored", truth: "original", grid: "samples" };

  function fmt(v, digits) {
    if (typeof v !== "number" || !isFinite(v)) {
      return String(v);
    }
    return v !== 0 && Math.abs(v) < 0.001 ? v.toExponential(2) : v.toFixed(digits);
  }

  function showResult(st) {
    const images = $("result-images");
    images.textContent = "";
    for (const name of st.images) {
      const fig = document.createElement("figure");
      const img = document.createElement("img");
      img.id = "img-" + name;
      img.alt = captions[name] || name;
      img.src = "/api/image?id=" + encodeURIComponent(st.id) + "&name=" + name;
      if (name === "grid") {
        img.className = "grid";
      }
      const cap = document.createElement("figcaption");
      cap.textContent = captions[name] || name;
      fig.append(img, cap);
      images.append(fig);
    }
    const r = st.report;
    let rows;
    if (st.kind === "restore") {
      rows = [
        ["PSNR", fmt(r.psnr, 2) + " dB (degraded " + fmt(r.psnr_degraded, 2) + " dB)"],
        ["SSIM", fmt(r.ssim, 3)],
        ["RMS(Ax − y)", fmt(r.rms_residual, 3) + " (σ_y " + r.sigma_y + ")"],
        ["task", r.task.name + ", " + r.task.measurements + " measurements"],
        ["method", r.method.name + " (" + r.method.sampler + ", " + r.method.grid + " grid, " + r.method.steps + " steps)"],
        ["NFE, VJPs", r.nfe + ", " + r.vjp],
        ["time", fmt(r.wall_s, 2) + " s"],
      ];
    } else {
      rows = [
        ["sampler", r.sampler + " (" + r.grid + " grid" + (r.denoise ? ", denoise" : "") + ", clip " + r.clip + ")"],
        ["images", r.n + " (seed " + r.seed + ")" + (r.diverged ? ", " + r.diverged + " diverged" : "")],
        ["NFE", String(r.nfe)],
        ["time", fmt(r.wall_s, 2) + " s"],
      ];
    }
    const tbody = $("numbers").tBodies[0];
    tbody.textContent = "";
    for (const [k, v] of rows) {
      const tr = tbody.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = v;
    }
    const main = st.kind === "restore" ? "restored" : "grid";
    $("download").href = "/api/image?id=" + encodeURIComponent(st.id) + "&name=" + main + "&download=1";
    $("download").textContent = "Download the " + (st.kind === "restore" ? "restoration" : "grid") + " (PNG)";
    $("result").hidden = false;
  }

  $("restore").addEventListener("click", () => {
    if (!source) {
      showError("pick a test image or upload a PNG first");
      return;
    }
    const task = $("task").value;
    const form = new FormData();
    form.append("image", source);
    form.append("task", task);
    form.append("noise", $("noise").value);
    form.append("method", $("method").value);
    form.append("nfe", $("nfe").value);
    form.append("seed", $("seed").value);
    if (task === "inpaint-box") {
      form.append("box", $("box").value);
    }
    if (task === "inpaint-random") {
      form.append("drop", $("drop").value);
    }
    if (task === "inpaint-mask") {
      form.append("mask", Array.from(mask).join(""));
    }
    start("/api/restore", form);
  });

  $("sample").addEventListener("click", () => {
    const form = new FormData();
    form.append("n", $("sample-n").value);
    form.append("nfe", $("sample-nfe").value);
    form.append("seed", $("sample-seed").value);
    start("/api/sample", form);
  });

  if (testCount > 0) {
    loadTest(0);
  }
})();
