;;; run.el --- the real agent-shell drives the built `kin acp'  -*- lexical-binding: t -*-

;; The real agent-shell (vendored under vendor/, see its README.md, with its dependencies acp.el
;; and shell-maker) drives the built `kin acp', configured as editors/acp/README.md ("Emacs:
;; agent-shell") tells a person to, against kin's mock model (rules.json next to this file). Run by
;; run.sh, which builds kin and the mock model, puts kin on PATH and sets KIN_BIN,
;; OPENAI_BASE_URL, OPENAI_API_KEY, KIN_MODEL and KIN_HOME:
;;   emacs --batch -Q -l editors/acp/test/emacs/run.el
;; Everything is done as a person would: the prompt is typed at the shell's prompt and sent with
;; RET; the permission is answered with the key agent-shell's permission dialog shows for "allow
;; once" (y), with point on the dialog's buttons. Success is what the shell buffer shows; every
;; wait is for a state, never a fixed sleep, and the timeouts are generous (a slow machine only
;; makes the test slower).

(require 'cl-lib)
(require 'subr-x)

(defconst kin-test-here
  (file-name-directory (or load-file-name buffer-file-name)))

(defconst kin-test-kin
  (or (getenv "KIN_BIN") (error "KIN_BIN is not set: run editors/acp/test/emacs/run.sh")))

(dolist (dir '("acp.el" "shell-maker" "agent-shell"))
  (add-to-list 'load-path (expand-file-name (concat "vendor/" dir) kin-test-here)))

(require 'agent-shell)

;; acp.el's log and traffic buffers hold kin's stderr and every ACP message: shown on failure.
(setq acp-logging-enabled t)

(defvar kin-test-shell nil "The agent-shell buffer under test.")

(defun kin-test-dump ()
  "Print the shell buffer and acp.el's logs to stderr."
  (when (buffer-live-p kin-test-shell)
    (message "--- agent-shell buffer\n%s"
             (with-current-buffer kin-test-shell
               (buffer-substring-no-properties (point-min) (point-max)))))
  (dolist (buf (buffer-list))
    (when (string-match-p "\\`\\(\\*acp-\\|acp-client-stderr\\)" (buffer-name buf))
      (message "--- %s (last 6000 characters)\n%s" (buffer-name buf)
               (with-current-buffer buf
                 (buffer-substring-no-properties
                  (max (point-min) (- (point-max) 6000)) (point-max)))))))

(defun kin-test-fail (msg)
  "Report MSG with the shell buffer and acp.el's logs, then exit non-zero."
  (message "FAIL: %s" msg)
  (kin-test-dump)
  (kill-emacs 1))

(defun kin-test-check (ok msg)
  "Fail with MSG unless OK."
  (unless ok (kin-test-fail msg)))

(defun kin-test-wait-for (pred what &optional timeout)
  "Run the event loop (process output, timers) until PRED is non-nil.
Fail, saying WHAT was awaited, after TIMEOUT seconds (default 120)."
  (let ((deadline (+ (float-time) (or timeout 120))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (kin-test-check (funcall pred) (concat "timed out waiting for " what))))

(defun kin-test-text ()
  "The shell buffer's text, without properties (collapsed sections included)."
  (with-current-buffer kin-test-shell
    (buffer-substring-no-properties (point-min) (point-max))))

(defun kin-test-has (s)
  "Non-nil when S occurs in the shell buffer."
  (string-search s (kin-test-text)))

;; The configuration from editors/acp/README.md ("Emacs: agent-shell"), the body of its
;; use-package :config as it is. run.sh puts the built kin first on PATH.
(kin-test-check (equal (executable-find "kin") (expand-file-name kin-test-kin))
                (format "kin on PATH is %s, not the built %s" (executable-find "kin") kin-test-kin))
(defun agent-shell-kin-make-config ()
  "kin, over the Agent Client Protocol."
  (agent-shell-make-agent-config
   :identifier 'kin
   :mode-line-name "kin"
   :buffer-name "kin"
   :shell-prompt "kin> "
   :shell-prompt-regexp "kin> "
   :client-maker (lambda (buffer)
                   (agent-shell--make-acp-client :command "kin"
                                                 :command-params '("acp")
                                                 :context-buffer buffer))))
(add-to-list 'agent-shell-agent-configs (agent-shell-kin-make-config))
(defun agent-shell-kin-start ()
  "Start kin in an agent-shell."
  (interactive)
  (agent-shell-start :config (agent-shell-kin-make-config)))

(defun kin-test-busy ()
  "Non-nil while a prompt is in flight.
shell-maker's own flag: set by RET, cleared when the turn ends."
  (with-current-buffer kin-test-shell (shell-maker-busy)))

(defun kin-test-session-id ()
  "The id of agent-shell's ACP session with kin, once session/new has answered."
  (map-nested-elt (buffer-local-value 'agent-shell--state kin-test-shell) '(:session :id)))

(defun kin-test-press (keys)
  "Type KEYS in the shell's window as a person would.
The keymaps active at point apply (the permission dialog's included)."
  (kin-test-check (eq (window-buffer (selected-window)) kin-test-shell)
                  (format "the shell is not in the selected window (%S is)"
                          (window-buffer (selected-window))))
  (execute-kbd-macro (kbd keys)))

(defun kin-test-ask (q)
  "Type Q at the shell's prompt and send it with RET."
  ;; Starting the shell starts kin acp and its session in the background; agent-shell refuses
  ;; input ("Busy, please wait") until the session exists, so a person waits for it too.
  (kin-test-wait-for (lambda () (and (kin-test-session-id) (not (kin-test-busy))))
                     (format "the shell to have a session with kin and take input before %S" q))
  (with-current-buffer kin-test-shell
    (goto-char (point-max))
    (kin-test-check (looking-back "kin> " (pos-bol))
                    "the shell does not end with its kin> prompt")
    (insert q))
  (kin-test-press "RET")
  (kin-test-check (kin-test-busy) (format "RET did not send %S" q)))

(defun kin-test-after (marker s)
  "Non-nil when S occurs in the shell buffer after the first MARKER."
  (let* ((text (kin-test-text))
         (at (string-search marker text)))
    (and at (string-search s text (+ at (length marker))))))

;; agent-shell shows the shell in the selected window (display-buffer-same-window), as M-x does.
(setq kin-test-shell (call-interactively #'agent-shell-kin-start))
(kin-test-check (and (bufferp kin-test-shell)
                     (with-current-buffer kin-test-shell (derived-mode-p 'agent-shell-mode)))
                (format "agent-shell-kin-start did not open a shell: %S" kin-test-shell))

;; 1. A prompt goes in; kin's streamed answer (three chunks from the mock model) shows assembled,
;; after the prompt, and the shell takes input again.
(let ((greet "Hello from kin's mock model: AS-ANSWER-31.")
      (q "as-greet-31: say hello"))
  (kin-test-ask q)
  (kin-test-wait-for (lambda () (not (kin-test-busy))) "the first turn to end")
  (kin-test-check (kin-test-after (concat "kin> " q) greet)
                  (format "the shell does not show kin's answer %S after the prompt" greet)))

;; 2. kin asks permission for a command; agent-shell's permission dialog shows it and puts point
;; on its buttons; "y" (its key for allow once) answers; the command runs and kin's answer after
;; it shows.
(let ((q "as-run-42: run the command"))
  (kin-test-ask q)
  (kin-test-wait-for (lambda () (kin-test-after (concat "kin> " q) "Tool Permission"))
                     "agent-shell's permission dialog")
  (kin-test-check (kin-test-after "Tool Permission" "echo as-ok-$((40+2))")
                  "the permission dialog does not show the command")
  (kin-test-check (not (kin-test-has "printed as-ok-42"))
                  "the command's answer came before the permission was given")
  (kin-test-check (kin-test-busy) "the turn ended while the permission was pending")
  (let ((allow (with-current-buffer kin-test-shell
                 (seq-find (lambda (a) (equal (map-elt a :kind) "allow_once"))
                           (map-elt (seq-find (lambda (tc) (map-elt tc :permission-actions))
                                              (map-values (map-elt agent-shell--state :tool-calls)))
                                    :permission-actions)))))
    (kin-test-check allow "kin's permission request offers no allow_once option")
    (kin-test-check (equal (map-elt allow :char) "y")
                    (format "agent-shell's key for allow once is %S, not y" (map-elt allow :char)))
    (kin-test-check (kin-test-after "Tool Permission" (map-elt allow :label))
                    (format "the permission dialog does not show %S" (map-elt allow :label)))
    (kin-test-press "y"))
  (kin-test-wait-for (lambda () (not (kin-test-busy))) "the second turn to end")
  (kin-test-check (not (kin-test-after (concat "kin> " q) "Tool Permission"))
                  "the permission dialog is still shown after y")
  (kin-test-check (kin-test-after (concat "kin> " q) "The command printed as-ok-42.")
                  "the shell does not show kin's answer after the command ran")
  (kin-test-check (not (kin-test-has "The command did not run."))
                  "the command did not run"))

(message "%s" "ok: agent-shell streamed kin's answer, asked its permission, and showed the answer after the command")
(kill-emacs 0)
