"""The read path: which memories a task needs (routing, task signals), how they are
rendered within a budget, and the benchmark that measures it."""
