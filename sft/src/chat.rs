//! The model's chat template (ChatML, as SmolLM2's GGUF carries it), rendered as upstream
//! renders a training example: `apply_chat_template(messages, add_generation_prompt=False)`.
//!
//! A GGUF names its template as Jinja source; only the ChatML family is rendered here, with the
//! default system prompt the template inserts when a conversation has none. The rendering is
//! checked against llama.cpp's own (`/apply-template`) in the server tests.

use crate::error::{Result, SftError};

const START: &str = "<|im_start|>";
const END: &str = "<|im_end|>";

/// A ChatML template: `<|im_start|>{role}\n{content}<|im_end|>\n` per message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTemplate {
    /// The system message the template adds before a conversation that starts without one.
    default_system: Option<String>,
}

/// One message of a conversation to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatMessage<'a> {
    /// `system`, `user` or `assistant`.
    pub role: &'a str,
    /// The text.
    pub content: &'a str,
}

impl ChatTemplate {
    /// The template of Jinja source `source` (a GGUF's `tokenizer.chat_template`), when it is
    /// ChatML; any other family is refused, naming it.
    pub fn from_jinja(source: &str) -> Result<ChatTemplate> {
        if !(source.contains(START) && source.contains(END)) {
            let head: String = source.chars().take(80).collect();
            return Err(SftError::Tokenizer(format!(
                "the model's chat template is not ChatML (it starts {head:?}); only ChatML \
                 models are trained"
            )));
        }
        // The default system message is a string literal of the template:
        // '<|im_start|>system\n...<|im_end|>'.
        let opening = format!("'{START}system\n");
        let default_system = source.find(&opening).and_then(|at| {
            let rest = &source[at + opening.len()..];
            rest.find(END).map(|end| rest[..end].to_string())
        });
        Ok(ChatTemplate { default_system })
    }

    /// The system message added to a conversation without one.
    pub fn default_system(&self) -> Option<&str> {
        self.default_system.as_deref()
    }

    /// `messages` rendered, without a generation prompt.
    pub fn render(&self, messages: &[ChatMessage<'_>]) -> String {
        let mut text = String::new();
        if let (Some(system), Some(first)) = (&self.default_system, messages.first()) {
            if first.role != "system" {
                push(&mut text, "system", system);
            }
        }
        for message in messages {
            push(&mut text, message.role, message.content);
        }
        text
    }
}

fn push(text: &mut String, role: &str, content: &str) {
    text.push_str(START);
    text.push_str(role);
    text.push('\n');
    text.push_str(content);
    text.push_str(END);
    text.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] \
        != 'system' %}{{ '<|im_start|>system\nBe brief.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' \
        + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}";

    #[test]
    fn a_conversation_without_system_gets_the_templates_default() {
        let template = ChatTemplate::from_jinja(SOURCE).unwrap();
        assert_eq!(template.default_system(), Some("Be brief."));
        let user = ChatMessage {
            role: "user",
            content: "hi",
        };
        let answer = ChatMessage {
            role: "assistant",
            content: "hello",
        };
        assert_eq!(
            template.render(&[user, answer]),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n\
             <|im_start|>assistant\nhello<|im_end|>\n"
        );
        let system = ChatMessage {
            role: "system",
            content: "S",
        };
        assert!(template
            .render(&[system, user])
            .starts_with("<|im_start|>system\nS<|im_end|>\n<|im_start|>user"));
    }

    #[test]
    fn other_template_families_are_refused() {
        let err = ChatTemplate::from_jinja("{{ bos_token }}[INST] {{ m }} [/INST]").unwrap_err();
        assert!(err.to_string().contains("not ChatML"), "{err}");
    }
}
