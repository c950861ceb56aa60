// The run picker: one <select> over every run in the kernel's store.

/** Runs grouped by label (insertion order of first appearance), newest run first in each group. */
export function groupRunsByLabel(runs) {
  const groups = new Map();
  for (const run of runs) {
    if (!groups.has(run.label)) groups.set(run.label, []);
    groups.get(run.label).push(run);
  }
  for (const list of groups.values()) list.sort((a, b) => (b.start_time || 0) - (a.start_time || 0));
  return groups;
}

/** The text of one option: the kernel's ("train · completed · 1234.500 ms · 5,200 events",
 * widgets/picker.py: run_entry), else the label. */
export function runOptionText(run) {
  return String(run.text || run.label || "");
}

/** Build the <select>; calls `onPick(runId)` when the user chooses a run. */
export function renderPicker(doc, runs, selected, onPick) {
  const select = doc.createElement("select");
  select.className = "everyo-picker";
  if (runs.length === 0) {
    const option = doc.createElement("option");
    option.textContent = "no runs yet: profile a cell with %%everyo_profile";
    option.disabled = true;
    select.appendChild(option);
  }
  for (const [label, group] of groupRunsByLabel(runs)) {
    const optgroup = doc.createElement("optgroup");
    optgroup.label = label;
    for (const run of group) {
      const option = doc.createElement("option");
      option.value = run.id;
      option.textContent = runOptionText(run);
      option.selected = run.id === selected;
      optgroup.appendChild(option);
    }
    select.appendChild(optgroup);
  }
  select.addEventListener("change", () => onPick(select.value));
  return select;
}

/**
 * The "compare with" <select>: none, or any run other than the shown one; calls
 * `onPick(runId)` ("" for none) when the user chooses.
 */
export function renderComparePicker(doc, runs, selected, compareId, onPick) {
  const select = doc.createElement("select");
  select.className = "everyo-compare-picker";
  const none = doc.createElement("option");
  none.value = "";
  none.textContent = "nothing (one run)";
  none.selected = !compareId;
  select.appendChild(none);
  for (const [label, group] of groupRunsByLabel(runs.filter((r) => r.id !== selected))) {
    const optgroup = doc.createElement("optgroup");
    optgroup.label = label;
    for (const run of group) {
      const option = doc.createElement("option");
      option.value = run.id;
      option.textContent = runOptionText(run);
      option.selected = run.id === compareId;
      optgroup.appendChild(option);
    }
    select.appendChild(optgroup);
  }
  select.addEventListener("change", () => onPick(select.value));
  return select;
}
