//! An offline stand-in for an LLM: a rig completion model that answers with the most relevant
//! context document it was given.
//!
//! Agents built on [`EngineIndex`](crate::EngineIndex) need a completion model to run, and tests,
//! demos and CI have no LLM. [`ContextEcho`] is one: it runs no model and generates nothing. It
//! answers every request with the first document rig put in it, which for an agent with
//! `dynamic_context` is the document the engine ranked first for the prompt, and it records
//! every request it receives so a test can check what reached the model. Replace it with a real
//! provider model for actual answers.

use std::sync::{Arc, Mutex, MutexGuard};

use rig_core::completion::CompletionRequest;
use rig_core::driver::{Exchange, Model, Opened, Opening, Transport};
use rig_core::error::{EncodeError, ProviderError};
use rig_core::operation::{Completion, Finish};
use rig_core::wire::{Decoder, Descriptor, Flow, Mode, Out, Wire, WireEvent};

/// The provider name the stand-in reports to rig (records, telemetry).
pub const PROVIDER: &str = "mb-rig-offline";

/// The answer to a request that carries no context document.
pub const NO_CONTEXT_ANSWER: &str = "I have no memory about that.";

/// The rig model type of the stand-in: [`ContextEchoWire`] over a [`ContextEcho`] runtime.
pub type ContextEchoModel = Model<ContextEchoWire, ContextEcho>;

/// The stand-in's runtime: answers requests and records them. Clones share the record.
#[derive(Debug, Clone, Default)]
pub struct ContextEcho {
    requests: Arc<Mutex<Vec<CompletionRequest>>>,
}

impl ContextEcho {
    /// A runtime that has received nothing yet.
    pub fn new() -> ContextEcho {
        ContextEcho::default()
    }

    /// The rig completion model answering through this runtime; pass it to
    /// `AgentBuilder::new`. Requests it receives are visible through [`requests`](Self::requests).
    pub fn model(&self) -> ContextEchoModel {
        Model::new(ContextEchoWire::default(), self.clone())
    }

    /// Every request received so far, oldest first, as rig prepared it for the model (context
    /// documents in [`CompletionRequest::documents`], ranked order kept).
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<CompletionRequest>> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What the stand-in answers to `request`: its first context document's text (a JSON string
/// document unquoted), or [`NO_CONTEXT_ANSWER`].
pub fn answer(request: &CompletionRequest) -> String {
    let Some(document) = request.documents.first() else {
        return NO_CONTEXT_ANSWER.to_owned();
    };
    let text = match serde_json::from_str::<serde_json::Value>(&document.text) {
        Ok(serde_json::Value::String(text)) => text,
        _ => document.text.clone(),
    };
    if text.trim().is_empty() {
        NO_CONTEXT_ANSWER.to_owned()
    } else {
        text
    }
}

impl Transport<ContextEchoWire> for ContextEcho {
    fn send(&self, request: CompletionRequest, _exchange: Exchange) -> Opening<String> {
        let reply = answer(&request);
        self.lock().push(request);
        Opening::ready(Opened::new(futures::stream::iter([
            Ok::<_, ProviderError>(reply),
        ])))
    }
}

/// The stand-in's wire: the request is sent as it is, and the reply is one frame, the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextEchoWire {
    model: String,
}

impl Default for ContextEchoWire {
    fn default() -> Self {
        ContextEchoWire {
            model: "context-echo".to_owned(),
        }
    }
}

impl Wire for ContextEchoWire {
    type Op = Completion;
    type Payload = CompletionRequest;
    type Frame = String;
    type Decoder<'id> = AnswerDecoder;

    fn describe(&self) -> Descriptor<'_> {
        Descriptor::new(PROVIDER).model(Some(self.model.as_str()))
    }

    fn encode(
        &self,
        request: CompletionRequest,
        _mode: Mode,
    ) -> Result<CompletionRequest, EncodeError> {
        Ok(request)
    }

    fn decoder<'id>(&self) -> Self::Decoder<'id> {
        AnswerDecoder
    }
}

/// Writes the answer frame as the reply's one text part, records `{"answer": ...}` as the
/// reply's provider document (the response's `raw`), then ends the reply.
#[derive(Debug, Default)]
pub struct AnswerDecoder;

impl<'id> Decoder<'id, Completion, String> for AnswerDecoder {
    type Event = String;

    fn classify(&self, frame: String) -> WireEvent<String> {
        WireEvent::Known(frame)
    }

    fn decode(
        &mut self,
        answer: String,
        mut out: Out<'id, Completion>,
    ) -> Result<Flow, ProviderError> {
        let part = out.text();
        out.push_text(&part, &answer);
        out.close_text(part);
        out.raw(serde_json::json!({ "answer": answer }));
        Ok(out.end(Finish::default()))
    }
}
