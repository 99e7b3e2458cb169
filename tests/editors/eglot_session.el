;;; eglot_session.el --- one headless Emacs + eglot session, run by test_emacs_eglot.py  -*- lexical-binding: t -*-
;;
;;   emacs --batch -l CONFIG.el -l tests/editors/eglot_session.el
;;
;; CONFIG.el is the tested block of docs/editors.md. This opens the kernel like a user would and
;; writes what Emacs shows at each step to $PALLAS_EDITOR_RESULT as JSON (and eglot's event log
;; next to it); test_emacs_eglot.py asserts. Batch Emacs has no command loop: after each "command"
;; (opening the file, editing a line) `pallas--command-done' runs what the loop would, the
;; post-command hooks and then the idle timers (as when the user pauses), such as eglot's
;; didChange timer and Flymake's check.

(require 'json)
(require 'eglot)

(defvar pallas--result-path (getenv "PALLAS_EDITOR_RESULT"))
(defvar pallas--kernel (getenv "PALLAS_EDITOR_FILE"))
(defvar pallas--fixed-line (getenv "PALLAS_EDITOR_FIXED_LINE"))
(defvar pallas--wait (/ (string-to-number (or (getenv "PALLAS_EDITOR_WAIT_MS") "60000")) 1000.0))
(defvar pallas--result (list (cons 'emacs emacs-version)))
(defvar pallas--step "start")
(defvar pallas--server nil)

(defvar pallas--log-messages nil "The server's log lines (window/logMessage), newest first.")
(cl-defmethod eglot-handle-notification :before (_server (_method (eql window/logMessage)) &key message
                                                        &allow-other-keys)
  (push message pallas--log-messages))

(defvar pallas--show-messages nil "The server's messages to the user (window/showMessage), newest first.")
(cl-defmethod eglot-handle-notification :before (_server (_method (eql window/showMessage)) &key message
                                                        &allow-other-keys)
  (push message pallas--show-messages))

(defvar pallas--published-version nil "The document version of the newest publishDiagnostics.")
(cl-defmethod eglot-handle-notification :before (_server (_method (eql textDocument/publishDiagnostics))
                                                        &key version &allow-other-keys)
  (setq pallas--published-version version))

(defun pallas--checked-p ()
  "Whether the server has published diagnostics for the buffer's current text."
  (equal pallas--published-version eglot--versioned-identifier))

(defun pallas--put (key value)
  (setf (alist-get key pallas--result) value)
  (pallas--save))

(defun pallas--save ()
  (setf (alist-get 'step pallas--result) pallas--step)
  (setf (alist-get 'log_messages pallas--result) (vconcat (reverse pallas--log-messages)))
  (with-temp-file pallas--result-path (insert (json-encode pallas--result)))
  (when (and pallas--server (jsonrpc-running-p pallas--server)) ; shutdown drops the event log
    (let ((events (jsonrpc-events-buffer pallas--server)))
      (when (buffer-live-p events)
        (with-current-buffer events
          (write-region (point-min) (point-max) (concat pallas--result-path ".events.log") nil 'quiet))))))

(defun pallas--wait-until (what predicate)
  "Process server output until PREDICATE holds; fail saying WHAT did not happen."
  (let ((deadline (+ (float-time) pallas--wait)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall predicate)
      (error "%s (waited %s s)" what pallas--wait))))

(defun pallas--settle (seconds)
  (let ((until (+ (float-time) seconds)))
    (while (< (float-time) until) (accept-process-output nil 0.05))))

(defun pallas--command-done ()
  "What the command loop does after a command: post-command hooks, then idle timers."
  (run-hooks 'post-command-hook)
  (dolist (timer (copy-sequence timer-idle-list))
    (when (memq timer timer-idle-list)
      (timer-event-handler timer)))
  (accept-process-output nil 0.05))

(defun pallas--column (position)
  "0-based characters from the start of POSITION's line."
  (save-excursion (goto-char position) (- position (line-beginning-position))))

(defun pallas--diagnostics ()
  "Flymake's diagnostics: buffer positions, and the LSP diagnostic eglot made each from."
  (vconcat
   (mapcar (lambda (diag)
             (let* ((beg (flymake-diagnostic-beg diag))
                    (end (flymake-diagnostic-end diag))
                    (lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data diag))))
               `((beg . ,beg) (end . ,end)
                 (line . ,(line-number-at-pos beg)) (column . ,(pallas--column beg))
                 (end_line . ,(line-number-at-pos end)) (end_column . ,(pallas--column end))
                 (type . ,(symbol-name (flymake-diagnostic-type diag)))
                 (text . ,(flymake-diagnostic-text diag))
                 (code . ,(plist-get lsp :code)) (source . ,(plist-get lsp :source))
                 (message . ,(plist-get lsp :message)))))
           (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))

(defun pallas--hover-at (text)
  "The hover eglot requests (as ElDoc does) with point on the first TEXT."
  (goto-char (point-min))
  (unless (search-forward text nil t)
    (error "no %s in the buffer" text))
  (goto-char (match-beginning 0))
  (let* ((params (eglot--TextDocumentPositionParams))
         (answer (jsonrpc-request pallas--server :textDocument/hover params :timeout pallas--wait))
         (contents (plist-get answer :contents))
         (position (plist-get params :position)))
    (goto-char (point-min))
    (if (null answer)
        :null
      `((line . ,(plist-get position :line)) (character . ,(plist-get position :character))
        (contents . ((kind . ,(plist-get contents :kind)) (value . ,(plist-get contents :value))))))))

(defun pallas--quick-fix (original)
  "What `M-x eglot-code-actions' offers on the diagnostic, and the buffer after choosing the
preferred pallas-lsp PAL001 fix at its prompt (`completing-read', answered here)."
  (unless (eglot--server-capable :codeActionProvider)
    (error "the server offers no code actions"))
  (goto-char (flymake-diagnostic-beg (car (flymake-diagnostics))))
  (let ((last-nonmenu-event ?\r)  ; as if typed: a prompt, not a mouse menu
        offered chosen)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (_prompt menu-items &rest _)
                 (dolist (item menu-items)
                   (let ((action (cdr item)))
                     (push `((title . ,(plist-get action :title)) (kind . ,(plist-get action :kind))
                             (isPreferred . ,(if (eq (plist-get action :isPreferred) t) t :json-false)))
                           offered)
                     (when (and (not chosen) (eq (plist-get action :isPreferred) t)
                                (string-prefix-p "pallas-lsp (PAL001): " (plist-get action :title)))
                       (setq chosen action))))
                 (if chosen (plist-get chosen :title) (error "no preferred pallas-lsp (PAL001) quick fix")))))
      (call-interactively #'eglot-code-actions))
    (pallas--command-done)
    (pallas--wait-until "the diagnostic stayed after the quick fix"
                        (lambda () (and (pallas--checked-p) (null (flymake-diagnostics)))))
    (pallas--settle 0.5)
    (pallas--command-done)
    (pallas--settle 0.3)
    `((offered . ,(vconcat (reverse offered))) (chosen . ,chosen) (after . ,(pallas--diagnostics))
      (text_before . ,original) (text_after . ,(buffer-substring-no-properties (point-min) (point-max))))))

(defun pallas--session (&optional original)
  (setq pallas--step "open the kernel and start pallas-lsp")
  (find-file pallas--kernel)
  (setq original (buffer-string))
  (pallas--command-done)
  (pallas--wait-until "eglot never managed the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
  (setq pallas--server (eglot-current-server))
  (pallas--put 'server_name (plist-get (eglot--server-info pallas--server) :name))
  (pallas--put 'flymake_mode (bound-and-true-p flymake-mode))

  (setq pallas--step "wait for the diagnostic")
  (pallas--command-done)
  (pallas--wait-until "no diagnostic appeared in Flymake" (lambda () (flymake-diagnostics)))
  (pallas--settle 0.3)
  (pallas--put 'diagnostics (pallas--diagnostics))

  (setq pallas--step "inlay hints and code lenses")
  (let ((document (eglot--TextDocumentIdentifier)))
    (pallas--put 'inlay_hints
                 (vconcat (mapcar (lambda (hint)
                                    (let ((position (plist-get hint :position)))
                                      (format "%d:%d %s" (plist-get position :line) (plist-get position :character)
                                              (plist-get hint :label))))
                                  (jsonrpc-request pallas--server :textDocument/inlayHint
                                                   (list :textDocument document
                                                         :range (list :start '(:line 0 :character 0)
                                                                      :end (list :line (count-lines (point-min) (point-max))
                                                                                 :character 0)))
                                                   :timeout pallas--wait))))
    (pallas--put 'code_lenses
                 (vconcat (mapcar (lambda (lens)
                                    (let ((command (plist-get lens :command)))
                                      (format "%d %s %s" (plist-get (plist-get (plist-get lens :range) :start) :line)
                                              (plist-get command :title) (aref (plist-get command :arguments) 1))))
                                  (jsonrpc-request pallas--server :textDocument/codeLens (list :textDocument document)
                                                   :timeout pallas--wait)))))

  (setq pallas--step "trace a function whose arguments are not known")
  (let ((answer (jsonrpc-request pallas--server :workspace/executeCommand
                                 (list :command "pallas.trace"
                                       :arguments (vector (plist-get (eglot--TextDocumentIdentifier) :uri) "scale_twice"))
                                 :timeout pallas--wait)))
    (pallas--put 'trace_unknown_args
                 `((error . ,(plist-get (plist-get answer :error) :type))
                   (messages . ,(vconcat (reverse pallas--show-messages)))
                   (trace_diagnostics . ,(seq-count (lambda (d) (equal (alist-get 'source d) "pallas-trace"))
                                                    (pallas--diagnostics))))))

  (setq pallas--step "hover on the get_global call")
  (pallas--put 'hover_get_global (pallas--hover-at "get_global("))
  (setq pallas--step "hover on a kernel parameter")
  (pallas--put 'hover_parameter (pallas--hover-at "x_ref"))

  (setq pallas--step "fix the line and wait for the diagnostic to go")
  (goto-char (flymake-diagnostic-beg (car (flymake-diagnostics))))
  (pallas--put 'replaced (buffer-substring-no-properties (line-beginning-position) (line-end-position)))
  (delete-region (line-beginning-position) (line-end-position))
  (insert pallas--fixed-line)
  (pallas--command-done)
  (pallas--wait-until "the diagnostic stayed after the fix"
                      (lambda () (and (pallas--checked-p) (null (flymake-diagnostics)))))
  (pallas--settle 0.5)
  (pallas--command-done)
  (pallas--settle 0.3)
  (pallas--put 'after_fix (pallas--diagnostics))
  (pallas--put 'hover_after_fix (pallas--hover-at "get_global("))

  (setq pallas--step "restore the bug and wait for the diagnostic")
  (erase-buffer)
  (insert original)
  (pallas--command-done)
  (pallas--wait-until "the diagnostic did not come back" (lambda () (and (pallas--checked-p) (flymake-diagnostics))))
  (pallas--settle 0.3)

  (setq pallas--step "quick fix")
  (pallas--put 'quick_fix (pallas--quick-fix original))

  (setq pallas--step "stop pallas-lsp")
  (eglot-shutdown pallas--server nil 10)
  (pallas--put 'server_stopped (not (jsonrpc-running-p pallas--server)))
  (setq pallas--step "done")
  (pallas--save))

(condition-case err
    (pallas--session)
  (error
   (when (bound-and-true-p flymake-mode)
     (pallas--put 'diagnostics_at_failure (pallas--diagnostics)))
   (pallas--put 'error (format "%s: %s" pallas--step (error-message-string err)))
   (kill-emacs 1)))
(kill-emacs 0)
