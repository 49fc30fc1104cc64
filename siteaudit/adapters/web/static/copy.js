// The report page's copy buttons: a button[data-copy] copies the text of the element it names. Without
// this script (or a clipboard) the buttons stay hidden and the text can be selected by hand.
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var source = document.getElementById(button.getAttribute("data-copy"));
  var status = document.getElementById("copy-status");
  if (!source || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(source.textContent).then(
      function () { if (status) status.textContent = "Copied."; },
      function () { if (status) status.textContent = "Could not copy: select the text and copy it."; }
    );
  });
});
