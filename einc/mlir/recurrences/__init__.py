"""Recurrences: the forms a recurrence group lowers to (scalar loop, vector lanes, chunks,
workgroup, host loop) and the rules for one step."""
