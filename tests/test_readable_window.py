"""The first hour of a lawyer: the window reads like a legal review. The point's text gets the room,
the queue names answers by their question and document, raters have readable names, and no figure
is shown without meaning."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.figures.rater_names import rater_name
from app.judging.jury import combine_jury, combine_roles, roles_jury
from app.judging.runs import run_judge
from app.judging.verification import VERIFIER, Verifier, verify_project
from app.project import Project
from app.raters import set_default
from app.workspace import Workspace
from models.judge import LemajJudge, Mode
from ui.review.window import ReviewWindow

from .test_judge import ScriptedBackendStandIn

ANSWER = "contractnli-027"  # a DoiT NDA answer: five points, some long
JUDGE = "judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard"
JURY = roles_jury(JUDGE)


def _judge_like_the_sample(project: Project, answer_ids: list[str]) -> None:
    """The embedded judge (a stand-in here), the verifier and their default jury, which the lead chose to
    speak: a column of the jury's tags and one of a juror's beside the reviewer's."""
    outputs = [json.dumps({"tag": tag}) for tag in ("correct", "incorrect", "irrelevant") * 70]
    outputs += [json.dumps({"missing": []})] * 10
    run_judge(
        project.sessions, LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE), JUDGE, answer_ids=answer_ids
    )
    verify_project(project.sessions, answer_ids, verifier=Verifier(project.sessions, rules_only=True))
    combine_roles(project.sessions, JUDGE, answer_ids)
    set_default(project.sessions, JURY, "lead")


def judged_window(qtbot, project: Project, width: int, height: int) -> ReviewWindow:
    """The review window, this size, on ANSWER, the sample judged as the sample's judge tags it."""
    _judge_like_the_sample(project, [ANSWER, "contractnli-028"])
    window = ReviewWindow(Workspace(project), "ana")
    qtbot.addWidget(window)
    window.resize(width, height)
    window.show()
    qtbot.waitExposed(window)
    window.open_answer(ANSWER)
    return window


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    return judged_window(qtbot, sample_project, 1600, 1000)


def test_the_point_s_text_takes_the_room_and_wraps(qtbot, window: ReviewWindow) -> None:
    model, table = window.answer_pane.points_model, window.answer_pane.points
    header = table.horizontalHeader()
    assert model.columnCount() > len(model.FIXED)  # a judge and at least one juror column
    qtbot.waitUntil(lambda: header.sectionSize(1) > 0)
    assert header.sectionSize(1) >= 240
    assert header.sectionSize(model.CITED) <= table.sizeHintForColumn(model.CITED)  # it wraps to leave the text room
    longest = max(range(model.rowCount()), key=lambda r: len(model.index(r, 1).data()))
    text = model.index(longest, 1).data()
    width = header.sectionSize(1) - 8  # the cell's margins
    needed = table.fontMetrics().boundingRect(0, 0, width, 10_000, Qt.TextFlag.TextWordWrap, text).height()
    assert table.rowHeight(longest) >= needed  # the whole text shows: the row grew to fit it
    for column in range(2, model.columnCount()):  # every other column as narrow as its contents
        if not header.isSectionHidden(column):
            assert header.sectionSize(column) <= max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
    last = max(c for c in range(model.columnCount()) if not header.isSectionHidden(c))  # the text takes what they
    assert header.sectionViewportPosition(last) + header.sectionSize(last) == table.viewport().width()  # leave


def test_on_a_laptop_the_point_s_text_keeps_a_readable_width_beside_every_column(qtbot, window: ReviewWindow) -> None:
    """1366 × 768 with the guidelines open and every column shown (the confidence, each rater's): the
    claim's text stays at least 240 px wide; the citations and raters' columns wrap, then the table scrolls."""
    from ui.review.guidelines_panel import open_guidelines
    from ui.review.point_table import READABLE

    pane = window.answer_pane
    model, table, header = pane.points_model, pane.points, pane.points.horizontalHeader()
    window.resize(1366, 768)
    for column in range(2, model.columnCount()):
        pane.show_column(column, True)
    open_guidelines(window, window.guidelines_panel, window.document_pane)
    for answer in (ANSWER, "contractnli-028"):
        window.open_answer(answer)
        qtbot.wait(50)  # the columns settle after the layout
        assert window.guidelines_panel.isVisible() and not header.isSectionHidden(model.CONFIDENCE)
        assert model.columnCount() > len(model.FIXED) + 1  # the jury's column and a juror's
        assert header.sectionSize(1) >= READABLE == 240
        assert table.rowHeight(0) >= table.fontMetrics().lineSpacing()  # the rows grew to the text


def test_a_juror_column_hides_from_the_header_s_menu(qtbot, window: ReviewWindow) -> None:
    model, header = window.answer_pane.points_model, window.answer_pane.points.horizontalHeader()
    column = len(model.FIXED)
    menu = window.answer_pane.column_menu()
    labels = [action.text() for action in menu.actions()]
    shown = " ".join(str(model.headerData(column, Qt.Orientation.Horizontal)).split())
    assert shown in labels
    menu.actions()[labels.index(shown)].setChecked(False)
    assert header.isSectionHidden(column)
    window.open_answer("contractnli-028")  # the next answer: still hidden
    assert header.isSectionHidden(model.HEADERS.index(model.HEADERS[column]))


def test_the_queue_names_an_answer_by_its_question_and_document(window: ReviewWindow) -> None:
    model = window.queue_pane.model
    row = model.row_of(ANSWER)
    assert row is not None
    answer = model.answer_at(row)
    shown = model.index(row, 0).data()
    question, document = shown.split("\n")
    assert question.endswith("…") and len(question) <= 61  # a short form, cut at a word
    assert "Does the document specify" in question or question[:-1] in answer.question
    assert document == "DoiT-ICN-NonDisclosure-Agreement"
    assert ANSWER in model.index(row, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert ANSWER not in shown


def test_raters_have_names_a_person_reads() -> None:
    assert rater_name(JUDGE) == "SmolLM2-135M (two-stage)"
    assert rater_name(JURY) == "Jury by role: SmolLM2-135M"  # correctness from the measured juror (app/judging/jury.py)
    assert rater_name(f"jury:rule:{VERIFIER}+{JUDGE}") == "Jury: Claim checker + SmolLM2-135M"
    assert rater_name("jury:rule:judge:a.Q8_0:one-pass:strict+judge:b:two-stage:standard") == "Jury: a + b"
    assert rater_name("judge:llama3:8b:two-stage:strict") == "llama3:8b (two-stage, strict)"
    assert rater_name(VERIFIER) == "Claim checker"
    assert rater_name("ContractNLI annotators") == "ContractNLI annotators"
    assert rater_name("ana") == "ana"


def test_the_points_table_names_its_rater_columns_readably_with_the_full_name_in_the_tooltip(
    window: ReviewWindow,
) -> None:
    model = window.answer_pane.points_model
    column = len(model.FIXED)
    full = model.HEADERS[column]
    shown = " ".join(str(model.headerData(column, Qt.Orientation.Horizontal)).split())
    assert shown == f"{rater_name(full)} · not measured" and ":" not in shown.replace("Jury:", "")  # no labels yet
    assert full in model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)


def test_a_confidence_that_never_varies_is_hidden_and_says_why(window: ReviewWindow) -> None:
    model, header = window.answer_pane.points_model, window.answer_pane.points.horizontalHeader()
    if model.same_confidence is None:  # the stand-in judge gives no confidence: make it the embedded judge's 0.50
        for point in model.points:
            object.__setattr__(point, "judge_confidence", 0.5)
        model.set_points(model.points)
    assert header.isSectionHidden(model.CONFIDENCE)
    assert model.index(0, model.CONFIDENCE).data() == "—"
    assert "same confidence (0.50)" in model.index(0, model.CONFIDENCE).data(Qt.ItemDataRole.ToolTipRole)
    window.answer_pane.show_column(model.CONFIDENCE, True)  # the header's menu brings it back
    assert not header.isSectionHidden(model.CONFIDENCE)


OTHER = "judge:Qwen2.5-7B-Instruct-Q4_K_M.gguf:one-pass:strict"
LONG_JURY = f"jury:both:{JUDGE}+{OTHER}"


def _judges_and_a_jury(project: Project) -> None:
    """Two judge runs with long internal names and a jury of both: no verifier, no model."""
    answers = ["contractnli-027", "contractnli-028", "cuad-000", "cuad-003"]
    for name, tags in ((JUDGE, ("correct", "incorrect")), (OTHER, ("incorrect", "irrelevant", "correct"))):
        outputs = [json.dumps({"tag": tag}) for tag in tags * 100] + [json.dumps({"missing": []})] * 10
        run_judge(
            project.sessions, LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE), name, answer_ids=answers
        )
    combine_jury(project.sessions, [JUDGE, OTHER], LONG_JURY, "both", answer_ids=answers)


def _overlaps(boxes: list) -> list[tuple[int, int]]:
    return [(i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])]


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_dashboard_plots_never_overlap_their_axis_labels(qtbot, sample_project: Project, size) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from app.figures.plots import report_figures
    from ui.dashboard import Dashboard

    _judges_and_a_jury(sample_project)
    for title, figure in report_figures(sample_project):
        canvas = FigureCanvasAgg(figure)  # as the dashboard's worker draws it to a picture
        canvas.draw()
        renderer = canvas.get_renderer()
        for ax in figure.axes:
            low, high = sorted(ax.get_xlim())
            labels = [t for t in ax.get_xticklabels() if t.get_text() and low <= t.get_position()[0] <= high]
            boxes = [t.get_window_extent(renderer) for t in labels]
            assert not _overlaps(boxes), f"{title}: x labels overlap: {[t.get_text() for t in labels]}"
            for box in boxes:  # inside the picture, not cut at its edge
                assert box.x0 >= 0 and box.x1 <= figure.bbox.width + 1, title
            texts = [t.get_text() for t in labels]
            assert not any(n in " ".join(texts) for n in (JUDGE, OTHER))  # readable names, not internal ones
    dashboard = Dashboard(Workspace(sample_project))
    qtbot.addWidget(dashboard)
    dashboard.resize(*size)
    dashboard.show()
    with qtbot.waitSignal(dashboard.refreshed, timeout=300_000):
        dashboard.refresh()
    plot = dashboard.canvas_holder.itemAt(0).widget()
    assert plot.pixmap().width() <= size[0]  # the whole plot shows at this window size
    raters = [dashboard.table.item(r, 0).text() for r in range(dashboard.table.rowCount())]
    assert "SmolLM2-135M (two-stage)" in raters and "Jury: SmolLM2-135M + Qwen2.5-7B" in raters
    row = raters.index("SmolLM2-135M (two-stage)")
    assert dashboard.table.item(row, 0).toolTip() == JUDGE


def test_agreement_leaves_a_jury_out_beside_its_jurors_and_says_so(qtbot, sample_project: Project) -> None:
    from app.figures.analytics import agreement
    from ui.dashboard import agreement_text

    _judges_and_a_jury(sample_project)
    stats = agreement(sample_project)
    assert LONG_JURY not in stats["raters"] and {JUDGE, OTHER} <= set(stats["raters"])
    assert stats["left_out"] == {LONG_JURY: [JUDGE, OTHER]}
    text = agreement_text(stats)
    assert "Jury: SmolLM2-135M + Qwen2.5-7B is left out" in text and "by construction" in text
    assert agreement(sample_project, [JUDGE, LONG_JURY])["raters"] == [JUDGE, LONG_JURY]  # asked for: kept


def test_a_missing_kappa_and_an_unknown_group_are_said_in_words() -> None:
    from ui.dashboard import agreement_text, group_name

    base = {"n_items": 12, "percent_agreement": 1.0, "fleiss_kappa": None, "krippendorff_alpha": None, "gwet_ac1": 1.0}
    one_tag = agreement_text({**base, "raters": ["ana", JUDGE], "cohen_kappa": None})
    assert "Cohen's κ not defined: only one tag used" in one_tag
    three = agreement_text({**base, "raters": ["ana", "ben", JUDGE], "cohen_kappa": None})
    assert "Cohen's κ is for two raters (here 3) · Fleiss" in three
    assert "Cohen's κ 0.50" in agreement_text({**base, "raters": ["ana", JUDGE], "cohen_kappa": 0.5})
    assert group_name("generator", "unknown") == "no generator recorded"
    assert group_name("generator", "gpt-4o") == "gpt-4o"
