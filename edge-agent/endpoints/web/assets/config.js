// The config page's buttons: open or close every branch of the JSON tree (each branch is a
// <details>, which opens and closes on its own when clicked).
document.addEventListener('DOMContentLoaded', () => {
  const branches = () => document.querySelectorAll('#tree details');
  const set = (open) => {
    for (const d of branches()) d.open = open;
  };
  document.getElementById('expand-all')?.addEventListener('click', () => set(true));
  document.getElementById('collapse-all')?.addEventListener('click', () => {
    set(false);
    // The root stays open: a closed tree shows only "Svc".
    const root = document.querySelector('#tree > li > details');
    if (root) root.open = true;
  });
});
