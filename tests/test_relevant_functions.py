"""A question's Answer is the function to change, with the evidence for it: what the text says
outright (a traceback's frames, a name written as code) outweighs a neighbour that merely
shares the question's words (``cq/index/functions.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cq.index.functions import Candidate, asked, best_answer, rerank
from cq.rewrite import understand
from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TRAINER = '''"""The training loop."""

from mylib.checkpoint import load_state


class Trainer:
    """Runs epochs of training and resumes from a checkpoint when asked."""

    def __init__(self, model, epochs=10):
        self.model = model
        self.epochs = epochs

    def fit(self, resume_from=None):
        """Train the model, resuming from the checkpoint ``resume_from`` if given."""
        if resume_from is not None:
            self.model.weights = load_state(resume_from)
        for epoch in range(self.epochs):
            self.model.step(epoch)
'''
CHECKPOINT = '''"""Checkpoint files: the model's state saved and loaded."""

import pickle


def save_state(state, path):
    """Write the model state of a checkpoint to ``path``."""
    with open(path, "wb") as f:
        pickle.dump({"model": state}, f)


def load_state(path):
    """Read the model state of a checkpoint back."""
    with open(path, "rb") as f:
        return pickle.load(f)["state"]
'''
RESUME = '''"""Resuming training: every helper here says checkpoint, resume and state."""


def resume_checkpoint_state(trainer, checkpoint):
    """Resume the trainer state from a checkpoint: the resume checkpoint state helper."""
    state = checkpoint.state
    trainer.resume(state)
    return state


def describe_resume_checkpoint(checkpoint):
    """Describe the checkpoint to resume training from (resume state, checkpoint state)."""
    return f"resume checkpoint state {checkpoint}"
'''
ISSUE = """Resuming from a checkpoint fails with KeyError

When I resume training from a checkpoint saved by the trainer, the state cannot be loaded:

```
Traceback (most recent call last):
  File "train.py", line 12, in <module>
    trainer.fit(resume_from="last.ckpt")
  File "/usr/lib/python3.11/site-packages/mylib/trainer.py", line 16, in fit
    self.model.weights = load_state(resume_from)
  File "/usr/lib/python3.11/site-packages/mylib/checkpoint.py", line 15, in load_state
    return pickle.load(f)["state"]
KeyError: 'state'
```

The checkpoint resume state should load.
"""


def _tree(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "mylib/__init__.py": "",
            "mylib/trainer.py": TRAINER,
            "mylib/checkpoint.py": CHECKPOINT,
            "mylib/resume.py": RESUME,
            "tests/test_resume.py": (
                "from mylib.resume import resume_checkpoint_state\n\n\n"
                "def test_resume_checkpoint_state():\n"
                "    assert resume_checkpoint_state is not None  # resume checkpoint state\n"
            ),
        },
    )


def _functions(data: dict) -> list[dict]:
    section = next(s for s in data["sections"] if s["type"] == "functions")
    return section["functions"]


def test_a_pasted_traceback_leads_to_its_innermost_frame_function(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=ISSUE)
    assert run.returncode == 0, run.stderr
    data = run.json()
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["text"]) == ("mylib/checkpoint.py", "load_state")
    first = _functions(data)[0]
    assert first["name"] == "mylib/checkpoint.py::load_state"
    assert "a traceback frame names load_state" in first["evidence"]
    assert first["scores"]["frame"] == 1.0  # the innermost frame
    # the markdown report says why it answers
    md = run_cq("search", "-", "--root", str(root), stdin=ISSUE)
    assert "Why: a traceback frame names load_state" in md.stdout


def test_relevant_functions_span_the_files_a_traceback_passes_through(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=ISSUE)
    assert run.returncode == 0, run.stderr
    first = [f["name"] for f in _functions(run.json())[:3]]
    # the frame that raised, then the one that called it, in another file
    assert first[:2] == ["mylib/checkpoint.py::load_state", "mylib/trainer.py::Trainer.fit"]


def test_a_name_the_question_writes_is_its_answer(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    question = "`save_state` drops the optimizer when writing a checkpoint of the training state"
    run = run_cq("search", question, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    data = run.json()
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["text"]) == ("mylib/checkpoint.py", "save_state")
    assert "the text writes save_state" in _functions(data)[0]["evidence"]


def test_test_code_is_not_the_answer_unless_the_question_is_about_tests() -> None:
    words = {"resume": 1.0, "checkpoint": 1.0}
    candidates = [
        Candidate(file="tests/test_resume.py", qualname="test_resume_checkpoint", fused=1.0),
        Candidate(file="mylib/resume.py", qualname="resume_checkpoint", fused=0.9),
    ]
    question = asked(understand("resume checkpoint"), words)
    first = rerank(candidates, question, [])[0]
    assert candidates[first.at].file == "mylib/resume.py"
    wanted = rerank(candidates, question, [], tests_wanted=True)[0]
    assert candidates[wanted.at].file == "tests/test_resume.py"


def _cache_tree(tmp_path: Path) -> Path:
    """Four short functions and one long one that say the same words once each."""

    def short(name: str) -> str:
        return (
            f"def {name}(store, name):\n"
            '    """Flush the cache entry of name."""\n'
            "    return store.flush_cache(name)\n\n\n"
        )

    steps = "".join(f"    step{i} = store.step({i})\n" for i in range(40))
    long = (
        "def rebuild_all(store, name):\n"
        '    """Flush the cache entry of name and rebuild."""\n'
        f"{steps}    return store.flush_cache(name)\n\n\n"
    )
    cache = short("drop_one") + short("drop_two") + short("drop_three") + long + short("drop_four")
    return write_tree(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/cache.py": cache})


def test_after_a_titles_answer_a_long_function_comes_before_short_ones(tmp_path: Path) -> None:
    """A one-line question's words fit many functions alike; a fix lands in a long one more
    often, so it is listed before the short ones. The Answer and a longer text's order are
    by the words alone."""
    root = _cache_tree(tmp_path)
    title = run_cq("search", "cache entry flush is wrong", "--root", str(root), "--format", "json")
    text = run_cq(
        "search", "-", "--root", str(root), "--format", "json",
        stdin="cache entry flush is wrong\n\nThe cache entry flush is wrong when I call it.\n",
    )  # fmt: skip
    assert title.returncode == 0 and text.returncode == 0, title.stderr + text.stderr
    titled = [f["name"].split("::")[1] for f in _functions(title.json())]
    texted = [f["name"].split("::")[1] for f in _functions(text.json())]
    assert texted.index("rebuild_all") > 1  # by the words, short functions first
    answer = title.json()["answer"]["name"]
    assert answer == text.json()["answer"]["name"] == texted[0] != "rebuild_all"  # the same
    assert titled[0] == "rebuild_all"
    scores = [f["score"] for f in _functions(title.json())]
    assert scores == sorted(scores, reverse=True)  # listed as scored, the Answer among them
    assert answer in titled


LAYERS = '''"""Network layers."""


class Block:
    """A residual block of two convolutions and a norm, with its own conv weights."""

    def __init__(self, channels, norm="batch"):
        self.conv_first = channels
        self.conv_second = channels
        self.norm_kind = norm

    def forward(self, x):
        return self.conv_second + self.conv_first + x


class Pyramid:
    """Pooling at several scales."""

    def __init__(self, scales):
        self.up_modules = []
        for scale in scales:
            self.up_modules.append(scale)

    def forward(self, x):
        return [m + x for m in self.up_modules]


class Network:
    """The whole network: conv blocks, a pyramid and norm layers, each block's conv channels
    set by the network's conv channel list and the norm by the network's norm."""

    def __init__(self, channels, norm="batch", conv=3):
        self.blocks = [Block(c, norm) for c in channels]
        self.conv = conv
        self.norm = norm
        self.pyramid = Pyramid([1, 2, 4])
'''


def test_each_python_method_of_one_name_is_its_own_relevant_function(tmp_path: Path) -> None:
    """Three classes of a module each define ``__init__``: they are three places to fix, and
    the one that holds what the question asks about (``up_modules``) is listed by its own
    name, not folded behind the best-fused constructor."""
    root = write_tree(tmp_path / "repo", {"net/layers.py": LAYERS})
    question = "Missing up_modules in Network when scripted"
    run = run_cq("search", question, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    names = [f["name"] for f in _functions(run.json())]
    assert names[0] == "net/layers.py::Pyramid.__init__", names
    assert "net/layers.py::Network.__init__" in names, names
    assert all(not f["namesakes"] for f in _functions(run.json())), names


GRAMMAR = '''"""Sequence grammar: matching elements in sequence."""


class Sequence:
    """Match a sequence of elements; dropped elements end the sequence matching."""

    def match(self, elements, context):
        """Match the elements in sequence; count dropped elements of the sequence."""
        matched = [e for e in elements if e in context]
        dropped = [e for e in elements if e not in context]
        return matched, dropped
'''
HELPERS = '''"""Parser helpers."""


def check_still_complete(before, after):
    """Check that a parse kept every segment."""
    if len(before) != len(after):
        raise RuntimeError(
            "Dropped elements in sequence matching! {!r} != {!r}".format(before, after)
        )
    return True
'''


def test_the_function_that_prints_a_quoted_message_answers(tmp_path: Path) -> None:
    """A title that quotes what the program printed is answered by the function printing
    it, not by the one whose text says the message's words most often."""
    root = write_tree(
        tmp_path / "repo",
        {"parser/grammar.py": GRAMMAR, "parser/helpers.py": HELPERS},
    )
    title = '"Dropped elements in sequence matching" when a statement ends twice'
    run = run_cq("search", title, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    data = run.json()
    first = _functions(data)[0]
    assert first["name"] == "parser/helpers.py::check_still_complete", _functions(data)
    assert "it holds a message the text quotes" in first["evidence"]
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["text"]) == ("parser/helpers.py", "check_still_complete")


def test_a_message_quoted_in_single_quotes_is_answered_by_the_function_printing_it(
    tmp_path: Path,
) -> None:
    """A title quoting the message as Python's repr prints it ('...') is answered by the
    function raising it, as one quoting it in double quotes is; the apostrophe of "doesn't"
    quotes nothing."""
    root = write_tree(
        tmp_path / "repo",
        {"parser/grammar.py": GRAMMAR, "parser/helpers.py": HELPERS},
    )
    title = "Sequence.match doesn't stop: 'Dropped elements in sequence matching' when it ends"
    run = run_cq("search", title, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    data = run.json()
    assert data["answer"]["name"] == "check_still_complete", data["answer"]
    assert "it holds a message the text quotes" in _functions(data)[0]["evidence"]


def test_after_a_titles_answer_the_class_it_names_comes_first() -> None:
    """A title that names a class (``RandNoise``) is answered as it says; after the Answer,
    the named class's other methods come before functions that merely share its words."""
    words = {"randnoise": 1.0, "changes": 1.0, "type": 1.0, "input": 1.0}
    candidates = [
        Candidate(file="aug/noise.py", qualname="RandNoise.__init__", fused=1.0),
        Candidate(file="io/write.py", qualname="write_image", fused=0.72),
        Candidate(file="aug/noise.py", qualname="RandNoise.__call__", fused=0.6),
    ]
    title = "RandNoise changes the type of the input"
    ranked = rerank(candidates, asked(understand(title), words), [])
    assert [candidates[s.at].qualname for s in ranked] == [
        "RandNoise.__init__",
        "RandNoise.__call__",
        "write_image",
    ]
    # the same words in an issue's text: no title, the fused order after the Answer
    text = f"{title}\n\nSee the logs."
    ranked = rerank(candidates, asked(understand(text), words), [])
    assert [candidates[s.at].qualname for s in ranked][1] == "write_image"


def test_a_how_question_is_answered_by_the_code_that_runs_not_its_constructor() -> None:
    """The constructor holds the class's words (its docstring, its parameters), but what a
    how-question asks is done by a method that runs; it stays listed. Asked about making the
    object, or as an issue title, the constructor may answer."""
    words = {"early": 1.0, "stopping": 1.0, "count": 1.0, "improvement": 1.0}
    candidates = [
        Candidate(file="handlers/stop.py", qualname="EarlyStopping.__init__", fused=1.0),
        Candidate(file="handlers/stop.py", qualname="EarlyStopping.__call__", fused=0.8),
        Candidate(file="handlers/log.py", qualname="log_improvement", fused=0.5),
    ]

    def answer(text: str) -> str:
        listed = rerank(candidates, asked(understand(text), words), [])
        assert [s.score for s in listed] == sorted((s.score for s in listed), reverse=True)
        first = best_answer(listed)
        assert first is not None
        return candidates[first.at].qualname

    how = "how does early stopping count evaluations without improvement?"
    assert answer(how) == "EarlyStopping.__call__"
    listed = rerank(candidates, asked(understand(how), words), [])
    assert len(listed) == 3  # the constructor stays listed, where its score puts it
    for made in ("initialized", "created"):
        assert answer(f"how is early stopping {made} to count improvement?") == (
            "EarlyStopping.__init__"
        )
    assert answer("in the trainer, how does early stopping count improvement?") == (
        "EarlyStopping.__call__"
    )
    title = answer("early stopping does not count evaluations without improvement?")
    assert title == "EarlyStopping.__init__"
    condition = answer("When early stopping counts evaluations, improvement is lost")
    assert condition == "EarlyStopping.__init__"


def test_a_how_question_is_answered_by_what_a_function_says_it_does() -> None:
    """Two functions whose texts hold the question's content words alike: the one whose name,
    signature and docstring say them answers; "to" and "the", which the index is asked,
    give a cache check no share of what the question asks."""
    from cq.index.coverage import head_of, words_of
    from cq.index.functions import measured, ordered
    from cq.index.query import asked_words
    from cq.index.units import file_units
    from cq.model.index_tuning import IndexTuning

    source = '''class Store:
    def check(self, item):
        # the user's option: misspelled names are suggested in the log
        return self.names.get(item, "to the user")


def look_up_option(opt, supported):
    """A misspelled option name: the closest supported one is suggested to the user."""
    return min(supported, key=lambda s: distance(s, opt))
'''
    units = {u.qualname: u for u in file_units(source, "python")}
    candidates = [
        Candidate(file="app/store.py", qualname="Store.check", fused=1.0),
        Candidate(file="app/store.py", qualname="look_up_option", fused=0.9),
    ]
    question = "how is a misspelled option name suggested to the user"
    signals = asked(understand(question), asked_words(understand(question), (), IndexTuning()))
    held = [words_of(units[c.qualname]) for c in candidates]
    heads = [head_of(units[c.qualname]) for c in candidates]
    found = measured(candidates, signals, [], [], held, None, heads)
    first = best_answer(ordered(found))
    assert first is not None and candidates[first.at].qualname == "look_up_option"
    assert found[0].signals["covers"] == found[1].signals["covers"]  # their texts: alike
    title = "misspelled option name suggested to the user"  # no question: no head signal
    said = asked(understand(title), asked_words(understand(title), (), IndexTuning()))
    assert {s.signals["head"] for s in measured(candidates, said, [], [], held, None, heads)} == {
        0.0
    }


FORECASTS = '''"""Forecasts: what a model predicts for each time step."""


class Forecast:
    """A forecast of a series."""

    def quantile(self, q):
        """Compute a quantile from the predicted distribution."""
        raise NotImplementedError()


class SampleForecast(Forecast):
    """A forecast held as sample paths."""

    def __init__(self, samples):
        self.samples = samples

    def quantile(self, q):
        ordered = sorted(self.samples)
        return ordered[int(round((len(ordered) - 1) * q))]


class QuantileForecast(Forecast):
    """A forecast held as its quantiles."""

    def __init__(self, values):
        self.values = values

    def quantile(self, q):
        return self.values[str(q)]
'''


def test_a_how_question_is_answered_by_an_override_not_the_declaration(tmp_path: Path) -> None:
    """The base class's method only declares the name (``raise NotImplementedError``) and
    its docstring holds the question's words; what a how-question asks is done by an
    override, read with that docstring (an override inherits it): the one holding the rest
    of the question's words (the samples) answers."""
    root = write_tree(tmp_path / "repo", {"model/forecast.py": FORECASTS})
    run = run_cq(
        "search",
        "how is a quantile computed from forecast samples",
        "--root",
        str(root),
        "--format",
        "json",
    )
    assert run.returncode == 0, run.stderr
    data = run.json()
    assert (data["answer"]["name"], data["answer"]["line"]) == ("quantile", 18), data["answer"]
    names = [f["name"] for f in _functions(data)]
    assert "model/forecast.py::SampleForecast.quantile" in names, names


def test_a_how_question_is_answered_by_the_code_that_reads_a_setting_not_its_builder_setter() -> (
    None
):
    """A Rust builder's setter (``fn env(mut self, ...) -> Self``) stores what it is given,
    and its long docstring holds the question's words; the code that reads the setting does
    what a how-question asks. The setter stays listed; a getter (``&self``) or a function
    taking ``&mut self`` that returns something else is no setter."""
    from cq.index.coverage import UnitReader
    from cq.index.functions import rerank_units
    from cq.index.fuse import UnitVote
    from cq.index.query import asked_words
    from cq.index.units import file_units
    from cq.model.index_tuning import IndexTuning

    arg = """pub struct Arg { env: Option<String> }

impl Arg {
    /// Read the argument's value from an environment variable when it is not given: the
    /// environment variable's value is used as the argument's value.
    pub fn env(mut self, name: &str) -> Self {
        self.env = Some(name.to_owned());
        self
    }

    /// The environment variable the argument's value is read from, if any.
    pub fn get_env(&self) -> Option<&str> {
        self.env.as_deref()
    }
}
"""
    parser = """pub struct Parser;

impl Parser {
    fn add_env(&mut self, matcher: &mut Matcher) -> Result<(), Error> {
        for arg in self.args() {
            if let Some(value) = arg.get_env().and_then(|name| std::env::var(name).ok()) {
                matcher.add_value(arg, value);
            }
        }
        Ok(())
    }
}
"""
    files = {"src/arg.rs": arg, "src/parser.rs": parser}
    units = {
        path: {u.qualname: u for u in file_units(text, "rust")} for path, text in files.items()
    }
    reader = UnitReader(lambda path: units[path])
    votes = [
        UnitVote(file="src/arg.rs", qualname="Arg::env", line=6, kind="fn", fused=1.0),
        UnitVote(file="src/parser.rs", qualname="Parser::add_env", line=4, kind="fn", fused=0.9),
    ]

    def listed(question: str) -> list[str]:
        said = asked(understand(question), asked_words(understand(question), (), IndexTuning()))
        ranked = rerank_units(
            [(v, []) for v in votes],
            [],
            [],
            said,
            reader.words,
            reader.lines,
            head=reader.head,
            setter=reader.setter,
        )
        first = best_answer([r.scored for r in ranked])
        answer = next(r.vote.qualname for r in ranked if r.scored is first)
        return [answer, *(r.vote.qualname for r in ranked)]

    how = listed("how are environment variables used as argument values")
    assert how[0] == "Parser::add_env", how
    assert "Arg::env" in how[1:]  # still listed
    title = listed("environment variable not used as argument value")  # no how-question
    assert title[0] == "Arg::env", title
    getter = reader.setter(
        UnitVote(file="src/arg.rs", qualname="Arg::get_env", line=12, kind="fn", fused=0.8)
    )
    assert not getter and not reader.setter(votes[1])


HANDLER = '''class EarlyStopping:
    """Stop the training when the validation score has not improved for a number of
    evaluations."""

    def __init__(self, patience):
        self.patience = patience
        self.counter = 0

    def reset(self):
        self.counter = 0

    def __call__(self, engine):
        score = engine.state.metrics["score"]
        if self.best is not None and score <= self.best:
            self.counter += 1
            if self.counter >= self.patience:
                engine.terminate()
        else:
            self.best = score
            self.counter = 0


def add_early_stopping_by_val_score(patience, evaluator, trainer, metric_name):
    es = EarlyStopping(patience=patience)
    evaluator.add_event_handler("completed", es)
    return es
'''


def test_a_how_question_reads_a_callable_class_docstring_as_its_call_methods() -> None:
    """A handler class says what it does in its docstring, and its ``__call__``, which does
    it, says nothing of its own: the ``head`` signal reads the class's docstring for it, so
    it answers over a helper whose name holds some of the question's words. Another method
    without a docstring does not inherit the class's."""
    from cq.index.coverage import UnitReader
    from cq.index.functions import rerank_units
    from cq.index.fuse import UnitVote
    from cq.index.query import asked_words
    from cq.index.units import file_units
    from cq.model.index_tuning import IndexTuning

    source = HANDLER
    units = {u.qualname: u for u in file_units(source, "python")}
    reader = UnitReader(lambda path: units)
    votes = [
        UnitVote(file="h.py", qualname=q, line=units[q].line, kind="function", fused=f)
        for q, f in (
            ("add_early_stopping_by_val_score", 1.0),
            ("EarlyStopping.__call__", 0.9),
            ("EarlyStopping.reset", 0.8),
        )
    ]
    question = "how does training stop when the validation score stops improving"
    said = asked(understand(question), asked_words(understand(question), (), IndexTuning()))
    ranked = rerank_units(
        [(v, []) for v in votes], [], [], said, reader.words, reader.lines, head=reader.head
    )
    first = best_answer([r.scored for r in ranked])
    assert next(r.vote.qualname for r in ranked if r.scored is first) == "EarlyStopping.__call__"
    reset = reader.head(votes[2])
    assert reset is not None and "validat" not in reset  # the class's words are its call's


ERRORS = '''class Field:
    def make_error(self, key, **kwargs):
        """An error of this field, its message looked up by key."""
        return self.error_class(self.error_messages[key].format(**kwargs), self.name)


def merge_errors(errors1, errors2):
    """Merge the errors of two fields: lists are concatenated, dicts merged by key."""
    if not errors1:
        return errors2
    if isinstance(errors1, dict) and isinstance(errors2, dict):
        return {**errors1, **errors2}
    return [errors1, errors2]
'''


def test_a_question_word_meets_the_word_code_uses_for_it() -> None:
    """ "combined" is what the question says, ``merge`` what the code says: the thesaurus
    (``cq.rewrite.THESAURUS``) asks the index for both and counts the code's word in a
    function's share of the question, below the question's own; without it the function
    first in the fused order, which holds the same other words (error, field), answers."""
    from cq.index.coverage import UnitReader
    from cq.index.functions import rerank_units
    from cq.index.fuse import UnitVote
    from cq.index.query import asked_words
    from cq.index.units import file_units
    from cq.model.index_tuning import IndexTuning

    units = {u.qualname: u for u in file_units(ERRORS, "python")}
    reader = UnitReader(lambda path: units)
    votes = [
        UnitVote(file="e.py", qualname=q, line=units[q].line, kind="function", fused=f)
        for q, f in (("Field.make_error", 1.0), ("merge_errors", 0.9))
    ]
    question = "how are validation errors from different fields combined"

    def answer(tuning: IndexTuning) -> str:
        said = asked(understand(question), asked_words(understand(question), (), tuning))
        ranked = rerank_units(
            [(v, []) for v in votes], [], [], said, reader.words, reader.lines, head=reader.head
        )
        first = best_answer([r.scored for r in ranked])
        return next(r.vote.qualname for r in ranked if r.scored is first)

    assert answer(IndexTuning()) == "merge_errors"
    assert answer(IndexTuning(synonym_weight=0.0)) == "Field.make_error"
    words = asked_words(understand(question), (), IndexTuning())
    assert words["merge"] < words["combined"]  # the code's word counts less than the question's


BATCH = '''class Batch:
    """A batch of instances, padded to one length and turned into tensors."""

    def get_padding_lengths(self):
        """Each field's largest length computed over the batch's instances."""
        lengths = {}
        for instance in self.instances:
            for key, value in instance.get_padding_lengths().items():
                lengths[key] = max(lengths.get(key, 0), value)
        return lengths

    def as_tensor_dict(self, padding_lengths=None):
        """The batch's instances padded to ``padding_lengths``, computed when not given."""
        lengths = padding_lengths or self.get_padding_lengths()
        return {key: pad(self.instances, lengths) for key in lengths}
'''


def test_a_how_question_is_answered_by_the_function_named_for_what_it_asks() -> None:
    """The caller that hands the work on holds the question's words in its docstring and body
    as the function doing it does, and comes first in the fused order; the function whose own
    name says what is asked (the padding lengths of a batch) answers. An issue title (no
    question) keeps the fused order's Answer."""
    from cq.index.coverage import UnitReader
    from cq.index.functions import rerank_units
    from cq.index.fuse import UnitVote
    from cq.index.query import asked_words
    from cq.index.units import file_units
    from cq.model.index_tuning import IndexTuning

    units = {u.qualname: u for u in file_units(BATCH, "python")}
    reader = UnitReader(lambda path: units)
    votes = [
        UnitVote(file="b.py", qualname=q, line=units[q].line, kind="function", fused=f)
        for q, f in (("Batch.as_tensor_dict", 1.0), ("Batch.get_padding_lengths", 0.9))
    ]

    def ranked(text: str) -> tuple[str, list[str]]:
        said = asked(understand(text), asked_words(understand(text), (), IndexTuning()))
        ranked = rerank_units(
            [(v, []) for v in votes], [], [], said, reader.words, reader.lines, head=reader.head
        )
        first = best_answer([r.scored for r in ranked])
        listed = [r.vote.qualname for r in ranked]
        return next(r.vote.qualname for r in ranked if r.scored is first), listed

    answer, listed = ranked("how are padding lengths computed for a batch of instances")
    assert answer == "Batch.get_padding_lengths"
    assert "Batch.as_tensor_dict" in listed  # the caller stays listed
    assert ranked("padding lengths computed wrongly for a batch")[0] == "Batch.as_tensor_dict"


def test_a_how_question_is_answered_by_the_project_not_a_contrib_helper() -> None:
    """A contributed helper that wires up the project's class says the question's words in
    its name and comes first in the fused order; what a how-question asks is done by the
    project's own code. The helper stays listed where its score puts it; an issue title
    (no question) may still be answered by it, and so may a question that names contrib."""
    words = {"training": 1.0, "stop": 1.0, "validation": 1.0, "score": 1.0}
    candidates = [
        Candidate(
            file="lib/contrib/engines/common.py",
            qualname="add_early_stopping_by_val_score",
            fused=1.0,
        ),
        Candidate(file="lib/handlers/early_stopping.py", qualname="EarlyStopping.run", fused=0.6),
    ]

    def answer(text: str) -> str:
        listed = rerank(candidates, asked(understand(text), words), [])
        assert candidates[listed[0].at].qualname == "add_early_stopping_by_val_score"
        first = best_answer(listed)
        assert first is not None
        return candidates[first.at].qualname

    assert answer("how does training stop when the validation score stops") == "EarlyStopping.run"
    assert answer("training does not stop on the validation score") == (
        "add_early_stopping_by_val_score"
    )
    # a question naming the directory asks about the code kept there
    assert answer("how does the contrib helper stop training on the validation score") == (
        "add_early_stopping_by_val_score"
    )


VALIDATOR = """impl Validator {
    /// Each required argument the matcher lacks is reported as missing
    fn validate_required(&mut self, matcher: &ArgMatcher) -> ClapResult<()> {
        for arg in self.required.iter() {
            if !matcher.contains(arg) {
                return self.missing_required_error(matcher);
            }
        }
        Ok(())
    }

    /// The error for the missing required arguments
    fn missing_required_error(&self, matcher: &ArgMatcher) -> ClapResult<()> {
        Err(Error::missing_required_argument(self.cmd, self.missing(matcher)))
    }
}

impl Error {
    /// Required arguments are missing
    pub(crate) fn missing_required_argument(cmd: &Command, required: Vec<String>) -> Self {
        Self::new(ErrorKind::MissingRequiredArgument).with_cmd(cmd, required)
    }
}
"""


def test_a_how_question_is_answered_by_the_code_that_finds_it_not_the_error_it_makes() -> None:
    """A named constructor (``fn missing_required_argument(..) -> Self``) and a function
    named for the error it makes (``missing_required_error``) hold the question's words in
    their names and docstrings; the code that detects the condition answers. Asked about
    the error itself, the function making it is no constructor."""
    from cq.index.coverage import UnitReader
    from cq.index.functions import rerank_units
    from cq.index.fuse import UnitVote
    from cq.index.query import asked_words
    from cq.index.units import file_units
    from cq.model.index_tuning import IndexTuning

    units = {u.qualname: u for u in file_units(VALIDATOR, "rust")}
    reader = UnitReader(lambda path: units)
    votes = [
        UnitVote(file="v.rs", qualname=q, line=units[q].line, kind="fn", fused=f)
        for q, f in (
            ("Error::missing_required_argument", 1.0),
            ("Validator::missing_required_error", 0.95),
            ("Validator::validate_required", 0.8),
        )
    ]

    def ranked(text: str) -> dict[str, tuple[float, float]]:
        said = asked(understand(text), asked_words(understand(text), (), IndexTuning()))
        ranked = rerank_units(
            [(v, []) for v in votes],
            [],
            [],
            said,
            reader.words,
            reader.lines,
            head=reader.head,
            setter=reader.setter,
        )
        first = best_answer([r.scored for r in ranked])
        assert first is not None
        return {
            r.vote.qualname: (r.scored.signals["constructor"], r.scored is first) for r in ranked
        }

    found = ranked("how are missing required arguments detected")
    assert found["Validator::validate_required"] == (0.0, True)
    assert found["Error::missing_required_argument"][0] == 1.0
    assert found["Validator::missing_required_error"][0] == 1.0
    about_errors = ranked("how is the error for missing required arguments made")
    assert about_errors["Validator::missing_required_error"][0] == 0.0


def _answer(candidates: list[Candidate], words: dict[str, float], text: str) -> str:
    """The qualified name ``rerank`` answers ``text`` with (``words``: as the index asked)."""
    first = best_answer(rerank(candidates, asked(understand(text), words), []))
    assert first is not None
    return candidates[first.at].qualname


def test_a_how_question_about_a_class_is_answered_by_it_not_by_its_variant() -> None:
    """A class named as the question's class with words the question does not say
    (``TraceGraph_ELBO`` beside ``Trace_ELBO``) does the thing for a case not asked about,
    yet holds the same words and leads the fused order; the class the question names
    answers, and a class of the same name kept aside (``contrib``) makes neither a variant.
    Asked with the variant's word, the variant answers; an issue title (no question) keeps
    the fused order's Answer."""
    words = {"elbo": 1.0, "gradient": 1.0, "estimated": 1.0, "loss": 1.0}
    candidates = [
        Candidate(file="infer/graph.py", qualname="TraceGraph_ELBO.loss_and_grads", fused=1.0),
        Candidate(file="infer/trace.py", qualname="Trace_ELBO.loss_and_grads", fused=0.8),
        # a class kept aside is no general class of the project's
        Candidate(file="contrib/funsor/elbo.py", qualname="ELBO.loss_and_grads", fused=0.5),
    ]
    asks = "how is the ELBO gradient estimated from the loss"
    assert _answer(candidates, words, asks) == "Trace_ELBO.loss_and_grads"
    graph = "how is the ELBO gradient estimated over the graph"
    assert _answer(candidates, {**words, "graph": 1.0}, graph) == ("TraceGraph_ELBO.loss_and_grads")
    title = "ELBO gradient estimated wrongly from the loss"
    assert _answer(candidates, words, title) == "TraceGraph_ELBO.loss_and_grads"


def test_a_how_question_is_answered_by_the_check_not_a_debug_panic() -> None:
    """A debug assertion named for the panic it raises (``_panic_on_missing_help``) says the
    question's words ("missing") and leads the fused order; the code that detects what is
    asked answers. Asked about the panic, it answers."""
    words = {"missing": 1.0, "required": 1.0, "arguments": 1.0, "detected": 1.0}
    candidates = [
        Candidate(file="src/command.rs", qualname="Command::_panic_on_missing_help", fused=1.0),
        Candidate(file="src/validator.rs", qualname="Validator::validate_required", fused=0.8),
    ]
    asks = "how are missing required arguments detected"
    assert _answer(candidates, words, asks) == "Validator::validate_required"
    panics = "how does it panic on missing required arguments"
    assert _answer(candidates, {**words, "panic": 1.0}, panics) == (
        "Command::_panic_on_missing_help"
    )


def test_a_how_question_is_answered_by_the_function_its_teaching_copy_shows() -> None:
    """A teaching copy kept aside (``contrib/minipyro.py::apply_stack``) is short and dense
    with the question's words, and leads the fused order; it yields the Answer, and what it
    scored counts for the project's function of the same name, not for a neighbour that
    merely comes next in the fused order."""
    words = {"sample": 1.0, "stack": 1.0, "handlers": 1.0}
    candidates = [
        Candidate(file="pkg/contrib/minipyro.py", qualname="apply_stack", fused=1.0),
        Candidate(file="pkg/poutine/handlers.py", qualname="_make_handler", fused=0.7),
        Candidate(file="pkg/poutine/runtime.py", qualname="apply_stack", fused=0.5),
    ]
    listed = rerank(candidates, asked(understand("how does a sample pass the stack"), words), [])
    asks = "how does a sample pass through the stack of handlers"
    assert _answer(candidates, words, asks) == "apply_stack"
    first = best_answer(rerank(candidates, asked(understand(asks), words), []))
    assert first is not None and candidates[first.at].file == "pkg/poutine/runtime.py"
    assert candidates[listed[0].at].file == "pkg/contrib/minipyro.py"  # listed as it scored


SAMPLER = '''"""Patch samplers that draw patch centres from a probability map."""


class WeightedSampler:
    """Samples patches where a probability map is high."""

    def process_map(self, probability_map, subject):
        data = probability_map.astype(float)
        self.clear_borders(data, self.patch_size)
        total = data.sum()
        if total == 0:
            message = (
                f"Empty probability map found for {subject}: voxels with positive"
                " probability might be near the image border. Pad the image by half"
                " the patch size before sampling patches."
            )
            raise RuntimeError(message)
        return data / total

    @staticmethod
    def clear_borders(probability_map, patch_size):
        # zero each voxel where a patch centred on it would not fit
        crop = patch_size // 2
        probability_map[:crop] = 0
        probability_map[-crop:] = 0

    def draw(self, probability_map):
        return probability_map.argmax()
'''


def test_a_how_question_is_answered_by_what_the_code_does_not_what_its_message_says(
    tmp_path: Path,
) -> None:
    """The caller's error message says the question's words ("near the image border"), and
    the function it calls does the work: a message tells the user what went wrong, the code
    around it is what the function does, so its words do not count toward the caller's
    share of the question when the Answer is chosen; the caller stays listed."""
    root = write_tree(tmp_path / "repo", {"sampler/weighted.py": SAMPLER})
    question = "how does the weighted sampler avoid sampling patches near the image border"
    run = run_cq("search", question, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    data = run.json()
    assert data["answer"]["name"] == "clear_borders", data["answer"]
    names = [f["name"] for f in _functions(data)]
    assert "sampler/weighted.py::WeightedSampler.process_map" in names, names
