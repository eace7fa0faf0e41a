"""The cyclic DCP split and block-table arithmetic, in plain Python (no torch)."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from kimi_lsp.verify.reference import block_table_width, local_len, pages_for, visible_positions


def test_local_len_examples():
    # upstream: local_len = max(ceil((G - r) / W), 0)
    assert [local_len(129, 2, r) for r in range(2)] == [65, 64]
    assert [local_len(3, 8, r) for r in range(8)] == [1, 1, 1, 0, 0, 0, 0, 0]
    assert local_len(1000, 8, 7) == 125


def test_block_table_width_is_aligned_for_the_public_api():
    assert block_table_width(1, 64) == 2
    assert block_table_width(3, 64) == 4
    assert block_table_width(5, 32) == 8
    assert block_table_width(0, 64) == 2  # never zero columns
    assert pages_for(65, 64) == 2 and pages_for(0, 64) == 0


def test_rank_mask_example_from_upstream():
    # G128, Q4, W2: query 0 on rank 1 sees global positions < 125, i.e. local keys 0..61
    visible = visible_positions(128, 4, 0, 2, 1)
    assert visible[-1] == 123 and len(visible) == 62


@given(st.integers(1, 3000), st.integers(1, 16), st.integers(1, 8))
def test_ranks_partition_every_query_row(global_len, world, q_len):
    for t in range(q_len):
        union = sorted(p for r in range(world) for p in visible_positions(global_len, q_len, t, world, r))
        assert union == list(visible_positions(global_len, q_len, t, 1, 0))
    assert sum(local_len(global_len, world, r) for r in range(world)) == global_len
