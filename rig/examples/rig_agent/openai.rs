//! The option to answer with a real model: rig's OpenAI chat-completions wire, sent through the
//! `reqwest` client the workspace already builds (rig-core's bundled transport would pull a
//! second major version of reqwest into the build).
//!
//! The endpoint and key come from the environment, as rig reads them: `OPENAI_API_KEY`, and
//! `OPENAI_BASE_URL` for any OpenAI-compatible server (vLLM, llama.cpp, Ollama, ...).

use std::future::Future;

use bytes::Bytes;
use mb_rig::rig_core::driver::{DynModel, Model};
use mb_rig::rig_core::http_client::{
    BoxedStream, Error, HttpClientExt, LazyBody, MultipartForm, Request, Response, Result,
    StreamingResponse,
};
use mb_rig::rig_core::operation::Completion;
use mb_rig::rig_core::providers::openai::OpenAIConfig;

/// rig's chat-completions model `model` at the endpoint the environment names.
pub fn chat_model(model: &str) -> std::result::Result<DynModel<Completion>, String> {
    let config = OpenAIConfig::from_env().map_err(|error| {
        format!("--openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for another server): {error}")
    })?;
    Ok(Model::new(config.chat(model), Http(reqwest::Client::new())).erase())
}

/// A `reqwest` client as a transport rig sends through.
#[derive(Clone, Debug)]
struct Http(reqwest::Client);

impl Http {
    /// Sends `request`; a non-success answer is an error that keeps status, headers and body.
    fn open<T: Into<Bytes>>(
        &self,
        request: Request<T>,
    ) -> impl Future<Output = Result<reqwest::Response>> + Send + 'static {
        let (parts, body) = request.into_parts();
        let sending = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(reqwest::Body::from(body.into()))
            .send();
        async move {
            let response = sending.await.map_err(Error::instance)?;
            if response.status().is_success() {
                return Ok(response);
            }
            let (status, headers) = (response.status(), response.headers().clone());
            let body = response.text().await.unwrap_or_default();
            Err(Error::non_success_with_details(status, headers, body))
        }
    }
}

/// The head of rig's response: the status and headers of `response`. The body is added with
/// `map` once the response is handed over to it.
fn head(response: &reqwest::Response) -> Response<()> {
    let mut head = Response::new(());
    *head.status_mut() = response.status();
    *head.headers_mut() = response.headers().clone();
    head
}

impl HttpClientExt for Http {
    fn send<T, U>(
        &self,
        request: Request<T>,
    ) -> impl Future<Output = Result<Response<LazyBody<U>>>> + Send + 'static
    where
        T: Into<Bytes> + Send,
        U: From<Bytes> + Send + 'static,
    {
        let opening = self.open(request);
        async move {
            let response = opening.await?;
            let head = head(&response);
            let body: LazyBody<U> = Box::pin(async move {
                let bytes = response.bytes().await.map_err(Error::instance)?;
                Ok(U::from(bytes))
            });
            Ok(head.map(|()| body))
        }
    }

    fn send_multipart<U>(
        &self,
        _request: Request<MultipartForm>,
    ) -> impl Future<Output = Result<Response<LazyBody<U>>>> + Send + 'static
    where
        U: From<Bytes> + Send + 'static,
    {
        std::future::ready(Err(Error::instance(std::io::Error::other(
            "this example's transport sends no multipart forms",
        ))))
    }

    fn send_streaming<T>(
        &self,
        request: Request<T>,
    ) -> impl Future<Output = Result<StreamingResponse>> + Send
    where
        T: Into<Bytes> + Send,
    {
        let opening = self.open(request);
        async move {
            let response = opening.await?;
            let head = head(&response);
            let chunks: BoxedStream = Box::pin(futures::stream::unfold(
                Some(response),
                |response| async move {
                    let mut response = response?;
                    match response.chunk().await {
                        Ok(Some(chunk)) => Some((Ok(chunk), Some(response))),
                        Ok(None) => None,
                        Err(error) => Some((Err(Error::instance(error)), None)),
                    }
                },
            ));
            Ok(head.map(|()| chunks))
        }
    }
}
