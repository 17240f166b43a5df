import { h, clear } from './dom.js';
import { attemptsText, prizeSummary, showActivityError, type ActivityContext } from './activity.js';
import type { PublicActivity, QuizAnswer } from './types.js';

/**
 * The quiz: one fieldset of radio buttons per question. The server scores
 * the answers (the public definition holds no correct options); the page
 * shows the server's score and what it awarded.
 */
export function renderQuiz(ctx: ActivityContext, activity: PublicActivity): HTMLElement {
  const questions = activity.questions ?? [];
  const form = h('form', { class: 'lr-quiz-form', novalidate: true });
  questions.forEach((question, number) => {
    const fieldset = h('fieldset', { class: 'lr-question', 'data-question-id': question.id });
    fieldset.append(h('legend', {}, `${number + 1}. ${question.text}`));
    question.options.forEach((option, index) => {
      const id = `q-${activity.id}-${question.id}-${index}`;
      fieldset.append(
        h('div', { class: 'lr-option' }, h('input', { type: 'radio', id, name: `q-${question.id}`, value: index }), h('label', { for: id }, option)),
      );
    });
    form.append(fieldset);
  });
  const submit = h('button', { type: 'submit', class: 'lr-button lr-primary', 'data-action': 'submit-quiz' }, 'Submit answers');
  const attempts = h('p', { class: 'lr-attempts', 'data-role': 'attempts' });
  const result = h('p', { class: 'lr-result', role: 'status', 'aria-live': 'polite', 'data-role': 'result' });
  const error = h('p', { class: 'lr-error', role: 'alert', hidden: true, 'data-role': 'error' });
  form.append(submit);

  async function refreshEligibility(): Promise<void> {
    try {
      const eligibility = await ctx.sdk.eligibility(activity.id);
      attempts.textContent = attemptsText(eligibility, 'attempt');
      submit.disabled = !eligibility.eligible;
    } catch (caught) {
      showActivityError(error, caught);
    }
  }

  function answers(): QuizAnswer[] | null {
    const chosen: QuizAnswer[] = [];
    for (const question of questions) {
      const checked = form.querySelector<HTMLInputElement>(`input[name="q-${CSS.escape(question.id)}"]:checked`);
      if (!checked) return null;
      chosen.push({ question_id: question.id, selected_option: Number(checked.value) });
    }
    return chosen;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.hidden = true;
    const chosen = answers();
    if (!chosen) {
      clear(error);
      error.hidden = false;
      error.dataset.code = 'QUIZ_INCOMPLETE';
      error.textContent = 'Please answer every question.';
      return;
    }
    submit.disabled = true;
    result.textContent = 'Checking your answers…';
    try {
      const completion = await ctx.sdk.submitQuiz(activity.id, chosen);
      const { score = 0, passed = false, correct_answers = 0, total_questions = questions.length } = completion.result;
      const extras = prizeSummary(completion);
      clear(result);
      result.append(
        h('strong', { 'data-role': 'score', 'data-passed': String(passed) }, `${passed ? 'Passed' : 'Not passed'}: ${correct_answers} of ${total_questions} correct (${score}%).`),
        extras.length ? ` ${extras.join(' · ')}` : '',
      );
      await ctx.completed(activity, completion);
    } catch (caught) {
      result.textContent = '';
      showActivityError(error, caught);
    }
    await refreshEligibility();
  });

  void refreshEligibility();
  const title = activity.name ?? 'Quiz';
  const passLine = activity.pass_percent !== undefined ? h('p', { class: 'lr-hint' }, `Answer at least ${activity.pass_percent}% correctly to pass.`) : null;
  return h('section', { class: 'lr-activity lr-quiz', 'data-activity-id': activity.id, 'aria-label': title }, h('h3', {}, title), passLine, form, attempts, result, error);
}
