// Loads the widget with the key, tenant and bot named in the address, the
// way a site's snippet would, and shows that snippet.
(function () {
  var q = new URLSearchParams(location.search);
  var attrs = { key: q.get('key'), tenant: q.get('tenant'), bot: q.get('bot') };
  if (!attrs.key || !attrs.tenant || !attrs.bot) {
    document.getElementById('missing').hidden = false;
    return;
  }
  var s = document.createElement('script');
  s.src = '/widget.js';
  s.async = true;
  Object.keys(attrs).forEach(function (k) { s.dataset[k] = attrs[k]; });
  if (q.get('user_token')) s.dataset.userToken = q.get('user_token');
  if (q.get('context')) s.dataset.context = q.get('context');
  ['title', 'color', 'position', 'theme', 'logo', 'avatar', 'locale'].forEach(function (k) {
    if (q.get(k)) s.dataset[k] = q.get(k);
  });
  document.getElementById('snippet').textContent = s.outerHTML.replace('src="/widget.js"', 'src="' + location.origin + '/widget.js"');
  document.body.appendChild(s);
})();
