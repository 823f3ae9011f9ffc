//! Examples as upstream's `SFTDataset` builds them, and the ones with nothing to learn refused.

use mb_sft::{encode, encode_all, ChatTokenizer, GgufFile, SftError, SftPair};

use crate::toy;

fn tokenizer() -> ChatTokenizer {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toy.gguf");
    toy::write(&path, 1);
    ChatTokenizer::from_gguf(&GgufFile::open(&path).unwrap()).unwrap()
}

fn pair(test_idx: u64, system: Option<&str>, instruction: &str, output: &str) -> SftPair {
    SftPair {
        test_idx,
        system_prompt: system.map(str::to_string),
        instruction: instruction.to_string(),
        output: output.to_string(),
    }
}

fn learned_text(tokenizer: &ChatTokenizer, pair: &SftPair, max_length: usize) -> String {
    let example = encode(pair, tokenizer, max_length).unwrap();
    tokenizer.decode(&example.targets.tokens).unwrap()
}

#[test]
fn only_the_answer_and_the_end_tokens_are_learned() {
    let tokenizer = tokenizer();
    let example = encode(&pair(3, None, "Name a colour.", "Blue."), &tokenizer, 8192).unwrap();
    let text = tokenizer.decode(&example.ids).unwrap();
    assert_eq!(
        text,
        "<|im_start|>system\nYou are a toy.<|im_end|>\n<|im_start|>user\nName a colour.\
         <|im_end|>\n<|im_start|>assistant\nBlue.<|im_end|>\n<|im_end|>",
        "the template's system prompt, and an end token appended after the closing newline"
    );
    assert_eq!(
        tokenizer.decode(&example.targets.tokens).unwrap(),
        "Blue.<|im_end|>\n<|im_end|>"
    );
    let positions = &example.targets.positions;
    assert!(positions.windows(2).all(|w| w[1] == w[0] + 1));
    assert_eq!(*positions.last().unwrap() as usize, example.ids.len() - 2);
    let with_system = encode(&pair(4, Some("Be kind."), "Hi", "Hello"), &tokenizer, 8192).unwrap();
    assert!(tokenizer
        .decode(&with_system.ids)
        .unwrap()
        .starts_with("<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi"));
}

#[test]
fn the_answer_starts_where_its_text_first_occurs_as_upstream_finds_it() {
    let tokenizer = tokenizer();
    let learned = learned_text(&tokenizer, &pair(5, None, "Repeat: yes", "yes"), 8192);
    assert!(
        learned.starts_with("yes<|im_end|>\n<|im_start|>assistant\nyes"),
        "the answer also ends the question, where upstream's text.find starts it: {learned:?}"
    );
}

#[test]
fn cutting_to_max_length_keeps_the_start_of_the_answer() {
    let tokenizer = tokenizer();
    let whole = encode(&pair(6, None, "Q", "A long answer"), &tokenizer, 8192).unwrap();
    let cut = encode(
        &pair(6, None, "Q", "A long answer"),
        &tokenizer,
        whole.ids.len() - 5,
    )
    .unwrap();
    assert_eq!(cut.ids, whole.ids[..whole.ids.len() - 5]);
    assert_eq!(cut.learned(), whole.learned() - 5);
}

#[test]
fn an_example_with_nothing_to_learn_is_refused_by_its_test_idx() {
    let tokenizer = tokenizer();
    let cases = [
        (pair(11, None, "Say nothing.", ""), "its answer is empty"),
        (
            pair(12, None, &"word ".repeat(50), "Fine."),
            "max_length 64 keeps none of its answer",
        ),
    ];
    for (pair, reason) in cases {
        let err = match encode(&pair, &tokenizer, 64) {
            Err(err) => err,
            Ok(_) => panic!("test_idx {} was accepted", pair.test_idx),
        };
        assert!(
            matches!(err, SftError::NothingToLearn { test_idx, .. } if test_idx == pair.test_idx),
            "{err}"
        );
        let message = err.to_string();
        assert!(message.contains("nothing to learn"), "{message}");
        assert!(
            message.contains(&format!("test_idx {}", pair.test_idx)),
            "{message}"
        );
        assert!(message.contains(reason), "{message}");
    }
    let err = match encode_all(&[pair(1, None, "Q", "A"), cases_bad()], &tokenizer, 8192) {
        Err(err) => err,
        Ok(_) => panic!("a set holding an empty answer was accepted"),
    };
    assert!(err.to_string().contains("test_idx 13"), "{err}");
    let err = match encode_all(&[], &tokenizer, 8192) {
        Err(err) => err,
        Ok(_) => panic!("no pairs were accepted"),
    };
    assert!(matches!(err, SftError::NoTrainingData(_)), "{err}");
}

fn cases_bad() -> SftPair {
    pair(13, None, "Q", "")
}

#[test]
fn digits_are_tokens_of_their_own_as_smollm_splits_them() {
    let tokenizer = tokenizer();
    let ids = tokenizer.encode("a 2025 b").unwrap();
    assert_eq!(tokenizer.decode(&ids).unwrap(), "a 2025 b");
    let special = tokenizer.encode("<|im_end|>").unwrap();
    assert_eq!(
        special,
        vec![tokenizer.eos()],
        "special tokens in text are one token"
    );
    assert_eq!(toy::SPECIALS[2], "<|im_end|>");
}
