import { h, clear } from './dom.js';
import { activityFrame, type ActivityContext } from './activity.js';
import { i18n } from './i18n.js';
import type { PublicActivity, QuizAnswer } from './types.js';

/**
 * The quiz: one fieldset of radio buttons per question. The server scores
 * the answers (the public definition holds no correct options); the page
 * shows the server's score and what it awarded.
 */
export function renderQuiz(ctx: ActivityContext, activity: PublicActivity): HTMLElement {
  const { t, number, percent } = i18n();
  const questions = activity.questions ?? [];
  const form = h('form', { class: 'lr-quiz-form', novalidate: true });
  questions.forEach((question, index) => {
    const fieldset = h('fieldset', { class: 'lr-question', 'data-question-id': question.id });
    fieldset.append(h('legend', {}, `${index + 1}. ${question.text}`));
    question.options.forEach((option, optionIndex) => {
      const id = `q-${activity.id}-${question.id}-${optionIndex}`;
      fieldset.append(
        h('div', { class: 'lr-option' }, h('input', { type: 'radio', id, name: `q-${question.id}`, value: optionIndex }), h('label', { for: id }, option)),
      );
    });
    form.append(fieldset);
  });
  const submit = h('button', { type: 'submit', class: 'lr-button lr-primary', 'data-action': 'submit-quiz' }, t.submitAnswers);
  const { attempts, result, error, play } = activityFrame(ctx, activity, submit, 'attempt');
  form.append(submit);

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
    const chosen = answers();
    if (!chosen) {
      clear(error);
      error.hidden = false;
      error.dataset.code = 'QUIZ_INCOMPLETE';
      error.textContent = t.answerEveryQuestion;
      return;
    }
    await play(t.checking, async () => {
      const completion = await ctx.sdk.submitQuiz(activity.id, chosen);
      const { score = 0, passed = false, correct_answers = 0, total_questions = questions.length } = completion.result;
      const headline = h('strong', { 'data-role': 'score', 'data-passed': String(passed) }, t.quizScore(passed, number(correct_answers), number(total_questions), percent(score)));
      return { completion, headline };
    });
  });

  const title = activity.name ?? t.quizTitle;
  const passLine = activity.pass_percent !== undefined ? h('p', { class: 'lr-hint' }, t.passHint(percent(activity.pass_percent))) : null;
  return h('section', { class: 'lr-activity lr-quiz', 'data-activity-id': activity.id, 'aria-label': title }, h('h3', {}, title), passLine, form, attempts, result, error);
}
