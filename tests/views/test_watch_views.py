"""The static summary's watch table: a plot with a dot per hit for a scalar, a text twin."""

import re

from jaxdbg.engine.outputs import StopSummary
from jaxdbg.engine.values import summaries
from jaxdbg.engine.watches import Watch, WatchValue
from jaxdbg.views import html, text, watch_views


def _scalar(n: int) -> Watch:
    return Watch("loss", [WatchValue(hit, f"{hit * 0.5}", number=hit * 0.5) for hit in range(1, n + 1)])


def _summary(*watches: Watch) -> StopSummary:
    return StopSummary(
        "Stopped at f.py:3 in step (breakpoint 1, hit 4)",
        "f.py:3",
        "jaxdbg.breakpoint()",
        (),
        "Continued.",
        watches=watches,
    )


def test_a_scalar_watch_is_a_plot_with_one_dot_per_hit_in_the_summary():
    markup = str(html.stop_summary(_summary(_scalar(4))))
    assert markup.count("<circle") == 4 and "<polyline" in markup
    assert "loss over 4 hits" in markup and ">2.0<" in markup and "4 hits" in markup


def test_an_array_watch_shows_its_statistics_and_errors_are_marked():
    stats = summaries.ArrayStats(0.0, 3.0, 1.5, 0, 0)
    arrays = Watch(
        "grads",
        [
            WatchValue(1, "min=0 max=1", stats=stats, shape=(4,), dtype="float32"),
            WatchValue(2, "min=0 max=3", stats=stats, shape=(4,), dtype="float32"),
        ],
    )
    failing = Watch("x[9]", [WatchValue(1, "", error="IndexError: out of range")])
    markup = str(html.stop_summary(_summary(arrays, failing)))
    assert "<circle" not in markup and "first: min=0 max=1" in markup
    assert "*** IndexError: out of range" in markup
    plain = text.stop_summary(_summary(arrays, failing))
    assert "watch grads = min=0 max=3  (2 hits)  first: min=0 max=1" in plain
    assert "watch x[9] = *** IndexError: out of range  (1 hits)" in plain


def test_user_text_in_a_watch_is_escaped():
    markup = str(html.stop_summary(_summary(Watch("'<b>'", [WatchValue(1, "'<b>'")]))))
    assert "<b>" not in markup and "&lt;b&gt;" in markup


def test_plot_points_skip_non_finite_values_and_fit_the_box():
    points = watch_views.plot_points([(1, 0.0), (2, float("nan")), (3, 10.0), (4, float("inf"))])
    assert len(points) == 2
    xs, ys = zip(*points)
    assert min(xs) >= 0 and max(xs) <= watch_views.PLOT_WIDTH
    assert min(ys) >= 0 and max(ys) <= watch_views.PLOT_HEIGHT
    assert ys[0] > ys[1]  # larger values are drawn higher up


def test_no_watches_no_table():
    assert "jaxdbg-watches" not in str(html.stop_summary(_summary()))
    assert not re.search("watch ", text.stop_summary(_summary()))


def test_every_watch_row_is_styled_alike_whatever_the_notebooks_table_rules():
    """Lab right-aligns table cells, shades every other row and boxes <code>: each
    row and cell says its own alignment and background, the same for every watch."""
    stats = summaries.ArrayStats(0.0, 3.0, 1.5, 0, 0)
    arrays = Watch("grads", [WatchValue(1, "min=0 max=3", stats=stats, shape=(4,), dtype="float32")])
    markup = watch_views.table_html([_scalar(3), arrays])
    rows = re.findall(r'<tr class="jaxdbg-watch" style="([^"]*)">(.*?)</tr>', str(markup))
    assert len(rows) == 2 and rows[0][0] == rows[1][0] and "background:transparent" in rows[0][0]
    cells = [re.findall(r'<td style="([^"]*)"', body) for _, body in rows]
    assert all("text-align:left" in style and "border:none" in style for row in cells for style in row)
    assert cells[0][0] == cells[1][0] and cells[0][3] == cells[1][3]
    codes = re.findall(r'<code style="([^"]*)"', str(markup))
    assert len(codes) == 2 and codes[0] == codes[1] and "background:transparent" in codes[0]


def test_the_plot_reads_without_hovering_titled_points_labelled_axes_and_its_figures_beside_it():
    loss = Watch("loss", [WatchValue(hit, f"{hit * 0.5}", number=hit * 0.5) for hit in range(3, 9)])
    loss.values.insert(2, WatchValue(None, "nan", number=float("nan")))  # a disabled stop's NaN: no point
    markup = str(watch_views.table_html([loss]))
    titles = re.findall(r"<circle [^>]*><title>([^<]*)</title></circle>", markup)
    assert titles == ["hit 3: 1.5", "hit 4: 2.0", "hit 5: 2.5", "hit 6: 3.0", "hit 7: 3.5", "hit 8: 4.0"]
    assert re.findall(r"<text [^>]*>([^<]*)</text>", markup) == ["4", "1.5", "hit 3", "8"]
    assert 'class="jaxdbg-watch-axis"' in markup
    overview = re.search(r'class="jaxdbg-watch-overview"[^>]*>(.*?)</span>', markup).group(1)
    assert overview == "first 1.5 · last 4<br>range 1.5 … 4 · 1 not finite"
    plain = watch_views.table_text([loss])
    assert plain.endswith("first 1.5 · last 4 · range 1.5 … 4 · 1 not finite"), plain
    # the points and labels lie inside the box, the lowest value lowest
    ys = [float(y) for y in re.findall(r'<circle cx="[^"]+" cy="([^"]+)"', markup)]
    assert all(0 < y < watch_views.PLOT_HEIGHT for y in ys) and ys[0] == max(ys)


def test_an_arrays_figures_are_its_means_first_and_last_and_the_range_of_its_min_and_max():
    def stats(low, high, mean):
        return summaries.ArrayStats(low, high, mean, 0, 0)

    grads = Watch(
        "grads",
        [WatchValue(1, "a", stats=stats(-1.0, 2.0, 0.5)), WatchValue(2, "b", stats=stats(-3.0, 1.0, -0.25))],
    )
    assert grads.overview() == "mean first 0.5 · last -0.25 · range -3 … 2"
    assert "mean first 0.5 · last -0.25<br>range -3 … 2" in str(watch_views.table_html([grads]))


def test_a_flat_history_labels_its_one_value_and_a_single_point_its_one_hit():
    flat = Watch("lr", [WatchValue(hit, "0.1", number=0.1) for hit in (1, 2, 3)])
    assert re.findall(r"<text [^>]*>([^<]*)</text>", str(watch_views.plot_svg(flat))) == ["0.1", "hit 1", "3"]
    one = Watch("lr", [WatchValue(7, "0.1", number=0.1)])
    assert re.findall(r"<text [^>]*>([^<]*)</text>", str(watch_views.plot_svg(one))) == ["0.1", "hit 7"]
