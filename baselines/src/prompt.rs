//! The answer prompt: the memory context, then the user's input, then an instruction to
//! answer from it, in English or Chinese. With upstream's words (`--upstream`) each system's
//! own template is read from upstream's sources; otherwise the layout is upstream's and the
//! instruction sentence is our wording.

use mb_core::Lang;
use mb_llm::{LlmError, Message};
use mb_upstream::{AnswerOf, Wording};

use crate::error::MemoryError;

/// `messages` with the last message's content replaced by the answer prompt of `of` (a
/// system without an upstream template: `None`, the paraphrase, noted under `name`) filled
/// with `context` and that content; earlier messages, e.g. a system prompt, are kept.
pub fn answer_prompt(
    wording: &Wording,
    of: Option<AnswerOf>,
    name: &'static str,
    messages: &[Message],
    context: &str,
    lang: Lang,
) -> Result<Vec<Message>, MemoryError> {
    let mut prompt = messages.to_vec();
    if let Some(last) = prompt.last_mut() {
        last.content = answer_text(wording, of, name, context, &last.content, lang)?;
    }
    Ok(prompt)
}

/// The text that replaces the user's last message (see [`answer_prompt`]).
pub fn answer_text(
    wording: &Wording,
    of: Option<AnswerOf>,
    name: &'static str,
    context: &str,
    question: &str,
    lang: Lang,
) -> Result<String, MemoryError> {
    match (wording.checkout(), of) {
        (Some(upstream), Some(of)) => upstream
            .answer(of, lang, context, question)
            .map_err(|e| MemoryError::Llm(LlmError::Upstream(e))),
        (_, of) => {
            wording.note_paraphrased(name);
            Ok(match of {
                Some(AnswerOf::Mem0) => mem0_text(context, question, lang),
                _ => rag_text(context, question, lang),
            })
        }
    }
}

/// Our wording of upstream's "RAG template".
pub fn rag_text(context: &str, question: &str, lang: Lang) -> String {
    match lang {
        Lang::En => format!(
            "Context:\n{context}\n\nUser: \n{question}\n\n\
             Reply to the user's input naturally and appropriately, basing the reply on the context given."
        ),
        Lang::Zh => format!(
            "相关知识：\n{context}\n\n用户输入：\n{question}\n\n请依据以上相关知识，自然、恰当地回复用户的输入。"
        ),
    }
}

/// Our wording of Mem0's answer template (its memories listed one per line).
fn mem0_text(memories: &str, question: &str, lang: Lang) -> String {
    match lang {
        Lang::En => format!(
            "User Memories:\n{memories}\n\nUser input: \n{question}\n\n\
             Reply to the user's input, basing the reply on the memories above."
        ),
        Lang::Zh => {
            format!("用户记忆：\n{memories}\n\n用户输入：\n{question}\n\n请依据以上记忆回复用户的输入。")
        }
    }
}

/// The sentence asking for output in the prompt's language.
pub(crate) fn language_line(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "Write in English.",
        Lang::Zh => "请用中文书写（JSON 键名保持英文）。",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_message_carries_context_then_question() {
        let messages = vec![
            Message::system("You are a judge."),
            Message::user("What happened?"),
        ];
        let prompt = answer_prompt(
            &Wording::paraphrased(),
            None,
            "test",
            &messages,
            "a\nb",
            Lang::En,
        )
        .unwrap();
        assert_eq!(prompt[0], messages[0]);
        assert!(prompt[1]
            .content
            .starts_with("Context:\na\nb\n\nUser: \nWhat happened?\n\n"));
        let zh = rag_text("知识", "问题", Lang::Zh);
        assert!(zh.starts_with("相关知识：\n知识\n\n用户输入：\n问题\n\n"));
    }
}
